"""The encoder + language model MIMO pair of scripts/measure-memory.py (configurations "mimo-").

In the spirit of Megatron-LM's examples/mimo non-colocated jobs (encoder and language model on
ranks of their own): the real examples/mimo code (examples/mimo/train.py, MimoModel and its
heterogeneous communicators) needs megatron/training, Transformer Engine and its data stack, none
of which can be installed on the lent machines. So the two modules are built from megatron-core
alone and joined by hand:

  rank 0: CLIPViTModel (local layer spec, ViT-L/14 at 336 px) and a MultimodalProjector ("mlp",
          1024 -> the language model's hidden size), as examples/mimo/model_providers/mock.py pairs
          them; class token dropped, so each image gives 576 embeddings;
  rank 1: GPTModel (local layer spec, untied embeddings), whose decoder input is the image's 576
          embeddings followed by the embeddings of 1,472 text tokens (2,048 in all).

Each module is wrapped as training.py wraps a model (Float16Module, Megatron DDP with fp32
gradient buffers and data parallelism of one) and has Megatron's optimizer. Per step rank 0 runs
the encoder forward for every microbatch and sends the embeddings (torch.distributed isend on a
communicator of their own); rank 1 receives each, runs the language model's forward and backward
and sends the embeddings' gradient back (on a second communicator, so the two directions never
queue behind each other); rank 0 then runs the encoder's backward per microbatch. Megatron's
parallel state is initialised with pipeline size 2 (so each rank's data-parallel group is itself)
while each model is given a process-group collection whose pipeline group is its rank alone (so
each builds all its layers).

"-coloc" configurations put both modules on every rank instead (one MegatronModule holding the
encoder, the projector and the language model, the embeddings passed in memory), data-parallel
over the ranks with Megatron's no-pipelining schedule and finalize_model_grads: the colocated
layout of the same job, for comparison.
"""

import os

import torch

import measure_configs as mc
import measure_runtime as rt


def run(megatron_dir, name, out_path, warmup, timed, report):
    import sys
    import json
    import torch.distributed as dist

    gpus, mods = mc.config_args(name)
    rank, world = rt.init_process(gpus, name)
    context_smi = rt.smi(os.getpid())
    sys.path.insert(0, megatron_dir)
    from megatron.core import parallel_state
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.models.gpt.gpt_model import GPTModel
    from megatron.core.models.vision.clip_vit_model import CLIPViTModel
    from megatron.core.models.vision.multimodal_projector import MultimodalProjector
    from megatron.core.models.vision.vit_layer_specs import get_vit_layer_with_local_spec
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.process_groups_config import ProcessGroupCollection
    from megatron.core.tensor_parallel.layers import ColumnParallelLinear, RowParallelLinear
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    from megatron.core.transformer.mlp import MLPSubmodules
    from megatron.core.transformer.module import Float16Module, MegatronModule
    from megatron.core.transformer.torch_norm import WrappedTorchNorm
    from megatron.core.transformer.transformer_config import TransformerConfig
    import measure_shims

    dist.init_process_group(backend="nccl", rank=rank, world_size=world)
    coloc = mc.is_coloc(name)
    parallel_state.initialize_model_parallel(pipeline_model_parallel_size=1 if coloc else 2)
    model_parallel_cuda_manual_seed(1234)
    pgc = ProcessGroupCollection.use_mpu_process_groups()
    if not coloc:
        solo = [dist.new_group([r]) for r in range(world)][rank]
        fwd_group, bwd_group = dist.new_group([0, 1]), dist.new_group([0, 1])
        pgc.pp = solo
    groups_smi = rt.smi(os.getpid())
    measure_shims.install_sp_norm()

    va, la = mods["vision"], mods["language"]
    lns = mc.megatron_namespace(la)
    mbs, seq = la["micro_batch_size"], la["seq_length"]
    n_img = mc.MIMO_IMAGE["image_tokens"]
    n_mb = lns.num_microbatches

    def tconfig(a, **kw):
        return TransformerConfig(
            num_layers=a["num_layers"], hidden_size=a["hidden_size"],
            ffn_hidden_size=a["ffn_hidden_size"], num_attention_heads=a["num_attention_heads"],
            normalization=a["normalization"], add_bias_linear=a["add_bias_linear"],
            bf16=True, params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16,
            attention_softmax_in_fp32=False, **kw)

    class VisionSide(MegatronModule):
        def __init__(self, config):
            super().__init__(config=config)
            spec = get_vit_layer_with_local_spec()
            if va["attention_backend"] == "flash":
                spec.submodules.self_attention.submodules.core_attention = \
                    measure_shims.SDPAttention
            self.vit = CLIPViTModel(config, spec, ln_pre_impl=WrappedTorchNorm,
                                    ln_post_impl=WrappedTorchNorm,
                                    patch_dim=mc.MIMO_IMAGE["patch"], img_h=mc.MIMO_IMAGE["img"],
                                    img_w=mc.MIMO_IMAGE["img"], pg_collection=pgc)
            pcfg = tconfig(dict(va, num_layers=1, hidden_size=la["hidden_size"],
                                ffn_hidden_size=la["hidden_size"]))
            self.proj = MultimodalProjector(
                pcfg, MLPSubmodules(linear_fc1=ColumnParallelLinear,
                                    linear_fc2=RowParallelLinear),
                "mlp", va["hidden_size"], pg_collection=pgc)

        def set_input_tensor(self, t):
            pass

        def forward(self, images):
            x = self.vit(images)[:, 1:, :]  # drop the class token: [b, 576, h]
            return self.proj(x.permute(1, 0, 2).contiguous())  # [576, b, llm hidden]

    def language_model(config):
        spec = get_gpt_layer_local_spec(normalization=la["normalization"])
        if la["attention_backend"] == "flash":
            spec.submodules.self_attention.submodules.core_attention = measure_shims.SDPAttention
        return GPTModel(config=config, transformer_layer_spec=spec,
                        vocab_size=lns.padded_vocab_size, max_sequence_length=seq,
                        pre_process=True, post_process=True, parallel_output=True,
                        share_embeddings_and_output_weights=False, pg_collection=pgc)

    class Colocated(MegatronModule):
        """Both modules on this rank: the image embeddings go straight to the language model."""
        from megatron.core.enums import ModelType
        model_type = ModelType.encoder_or_decoder

        def __init__(self, config):
            super().__init__(config=config)
            self.model_type = self.__class__.model_type  # the schedule asks, as of GPTModel
            self.vision = VisionSide(tconfig(va))
            self.language = language_model(config)

        def set_input_tensor(self, t):
            pass

        def forward(self, images, text, position_ids, labels):
            emb = self.vision(images)
            text_emb = self.language.embedding(input_ids=text,
                                               position_ids=position_ids[:, emb.shape[0]:])
            dec = torch.cat([emb, text_emb], dim=0)
            return self.language(text, position_ids, None, decoder_input=dec, labels=labels)

    if coloc:
        config = tconfig(la)
        model = Colocated(config)
    elif rank == 0:
        config = tconfig(va)
        model = VisionSide(config)
    else:
        config = tconfig(la)
        model = language_model(config)
    model.cuda(torch.cuda.current_device())
    model = Float16Module(config, model)
    ddp_config = DistributedDataParallelConfig(grad_reduce_in_fp32=True,
                                               use_distributed_optimizer=False)
    model = DistributedDataParallel(config=config, ddp_config=ddp_config, module=model)
    params_here = sum(p.numel() for p in model.parameters())
    optimizer = get_megatron_optimizer(
        OptimizerConfig(optimizer="adam", lr=1e-4, weight_decay=0.01, bf16=True,
                        params_dtype=torch.bfloat16, clip_grad=1.0), [model])
    if coloc:  # as run_gpt: Megatron's schedule reduces the gradients over dp
        from megatron.core.distributed.finalize_model_grads import finalize_model_grads
        config.finalize_model_grads_func = finalize_model_grads
        config.grad_scale_func = optimizer.scale_loss
    after_setup = rt.snapshot()
    after_setup["smi"] = rt.smi(os.getpid())

    g = torch.Generator(device="cuda")
    g.manual_seed(42 + rank)
    h = la["hidden_size"]
    pos = torch.arange(seq, device="cuda").unsqueeze(0).expand(mbs, -1)
    gpt = model.module.module if rank == 1 and not coloc else None

    def colocated_step():
        from megatron.core.pipeline_parallel import get_forward_backward_func

        def data():
            while True:
                yield (torch.randn(mbs, 3, mc.MIMO_IMAGE["img"], mc.MIMO_IMAGE["img"],
                                   device="cuda", generator=g),
                       torch.randint(0, la["vocab_size"], (mbs, seq - n_img), device="cuda",
                                     generator=g),
                       torch.randint(0, la["vocab_size"], (mbs, seq), device="cuda",
                                     generator=g))

        def forward_step(it, m):
            img, text, labels = next(it)
            out = m(img, text, pos, labels)

            def loss_func(t):
                loss = t.float().mean()
                return loss, {"lm loss": loss.detach().clone()}
            return out, loss_func

        losses = get_forward_backward_func()(
            forward_step_func=forward_step, data_iterator=data(), model=[model],
            num_microbatches=n_mb, seq_length=seq, micro_batch_size=mbs, forward_only=False)
        return float(sum(float(x["lm loss"]) for x in losses)) / len(losses)

    def encoder_step():
        outs, sends = [], []
        for _ in range(n_mb):
            img = torch.randn(mbs, 3, mc.MIMO_IMAGE["img"], mc.MIMO_IMAGE["img"], device="cuda",
                              generator=g)
            emb = model(img)
            sends.append(dist.isend(emb.detach().contiguous(), 1, group=fwd_group))
            outs.append(emb)
        for emb in outs:
            grad = torch.empty_like(emb)
            dist.recv(grad, 1, group=bwd_group)
            torch.autograd.backward(emb, grad)
        for w in sends:
            w.wait()
        return None

    def language_step():
        losses, sends = [], []
        for _ in range(n_mb):
            emb = torch.empty(n_img, mbs, h, device="cuda", dtype=torch.bfloat16)
            dist.recv(emb, 0, group=fwd_group)
            emb.requires_grad_(True)
            text = torch.randint(0, la["vocab_size"], (mbs, seq - n_img), device="cuda",
                                 generator=g)
            labels = torch.randint(0, la["vocab_size"], (mbs, seq), device="cuda", generator=g)
            text_emb = gpt.embedding(input_ids=text, position_ids=pos[:, n_img:])
            dec = torch.cat([emb, text_emb], dim=0)
            out = model(text, pos, None, decoder_input=dec, labels=labels)
            loss = out.float().mean() / n_mb
            loss.backward()
            sends.append(dist.isend(emb.grad.contiguous(), 0, group=bwd_group))
            losses.append(loss.detach() * n_mb)
        for w in sends:
            w.wait()
        return float(sum(losses)) / len(losses)

    per_step = []
    timer = rt.StepTimer()
    for i in range(warmup + timed):
        timer.start()
        model.zero_grad_buffer()
        optimizer.zero_grad()
        if coloc:
            loss = colocated_step()  # finalize_model_grads syncs the gradients
        else:
            loss = encoder_step() if rank == 0 else language_step()
            model.finish_grad_sync()
        if i < 2:
            before_step = rt.snapshot()
        ok, grad_norm, _ = optimizer.step()
        timer.stop()
        if i < 2:
            snap = rt.snapshot()
            snap.update(before_optimizer_step=before_step, update_successful=bool(ok),
                        grad_norm=None if grad_norm is None else float(grad_norm), loss=loss)
            if i == 0:
                snap["smi"] = rt.smi(os.getpid())
            per_step.append(snap)
    last = rt.snapshot()
    mine = {
        "rank": rank,
        "module": "vision+language" if coloc else "vision" if rank == 0 else "language",
        "parameters_on_rank": params_here, "smi_after_cuda_init": context_smi,
        "smi_after_process_groups": groups_smi, "after_setup": after_setup, "steps": per_step,
        "after_last_step": last, "max_allocated": last["max_allocated"],
        "max_reserved": last["max_reserved"], "smi_after_last_step": rt.smi(os.getpid()),
        "step_seconds": timer.times,
    }
    ranks = [None] * world
    dist.all_gather_object(ranks, mine)
    if rank == 0:
        theory = mc.theory_of(megatron_dir, name)
        flops = theory["model_flops_per_step"]
        result = {
            "config": name, "gpus": gpus, "arguments": mods,
            "image": mc.MIMO_IMAGE,
            "megatron_theory": theory["megatron_theory"],
            "module_flops_per_step": {m: t["model_flops_per_step"]
                                      for m, t in theory["modules"].items()},
            "stack": {"transformer_impl": "local", "attention_backend": la["attention_backend"],
                      "grad_reduce_in_fp32": True,
                      "schedule": "colocated: encoder then language model per microbatch, "
                                  "data-parallel over the ranks" if coloc else
                                  "encoder: all forwards then all backwards; "
                                  "language: forward+backward per microbatch"},
            "step": rt.step_summary(ranks, warmup, la["global_batch_size"] * seq, flops, gpus),
            "ranks": ranks, "env": rt.env_info(optimizer),
        }
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)
        report(result)
    dist.barrier()
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()
