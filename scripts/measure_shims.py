"""Two shims that let Megatron-core's local (non-Transformer-Engine) layer spec run what the
measurements need on a machine where neither Apex nor Transformer Engine can be installed.

1. Sequence parallelism with torch norms (install_sp_norm). Without Apex the local spec's norm is
   WrappedTorchNorm (megatron/core/transformer/torch_norm.py), which asserts
   "sequence parallel not supported by torch LayerNorm". The norm itself needs nothing for
   sequence parallelism: each rank normalises its own tokens. What Megatron needs is that the
   norm's weights carry `sequence_parallel = True`, so that finalize_model_grads all-reduces their
   gradients over the tensor-parallel group (megatron/core/distributed/finalize_model_grads.py,
   `_allreduce_non_tensor_model_parallel_grads`); Apex's FusedLayerNorm does exactly that
   (megatron/core/fusions/fused_layer_norm.py: setattr(self.weight, 'sequence_parallel', ...)).
   The shim builds WrappedTorchNorm's torch LayerNorm/RMSNorm with the assertion bypassed and
   marks its parameters the same way.

2. Fused attention (SDPAttention). A core-attention module with DotProductAttention's interface
   (inputs [s, b, heads, dim], output [s, b, heads*dim]) that calls
   torch.nn.functional.scaled_dot_product_attention restricted to the FlashAttention-2 kernel, so
   no s*s scores are kept: the memory and speed of Transformer Engine's flash backend, which the
   local spec cannot give. With context parallelism (cp > 1) it all-gathers keys and values over
   the cp group (autograd-aware: the backward reduce-scatters their gradients), as Transformer
   Engine's cp_comm_type="all_gather" does, and each local query chunk (Megatron's load-balanced
   split: chunks r and 2cp-1-r of 2cp) attends to the keys up to its own position with a
   lower-right causal mask. check_cp_attention compares it with one-GPU attention on random data.
"""

import math

import torch
import torch.distributed.nn.functional  # noqa: F401 (autograd-aware all_gather)
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

from megatron.core import parallel_state
from megatron.core.transformer import torch_norm
from megatron.core.transformer.enums import AttnMaskType
from megatron.core.transformer.module import MegatronModule


def install_sp_norm():
    """Let WrappedTorchNorm build under sequence parallelism, its weights marked for Megatron's
    tensor-parallel gradient all-reduce."""
    orig = torch_norm.WrappedTorchNorm.__new__
    if getattr(orig, "_measure_shim", False):
        return

    def new(cls, *args, **kwargs):
        config = kwargs["config"] if "config" in kwargs else args[0]
        sp = config.sequence_parallel
        config.sequence_parallel = False
        try:
            norm = orig(cls, *args, **kwargs)
        finally:
            config.sequence_parallel = sp
        for p in norm.parameters():
            setattr(p, "sequence_parallel", sp)
        return norm

    new._measure_shim = True
    torch_norm.WrappedTorchNorm.__new__ = staticmethod(new)


def _group(pg_collection, name, fallback):
    g = getattr(pg_collection, name, None) if pg_collection is not None else None
    return g if g is not None else fallback()


class SDPAttention(MegatronModule):
    """Core attention through scaled_dot_product_attention's flash kernel (see the module doc)."""

    def __init__(self, config, layer_number, attn_mask_type, attention_type,
                 attention_dropout=None, softmax_scale=None, cp_comm_type=None,
                 pg_collection=None):
        super().__init__(config=config)
        tp = _group(pg_collection, "tp", parallel_state.get_tensor_model_parallel_group)
        self.cp_group = None
        if config.context_parallel_size > 1:
            self.cp_group = _group(pg_collection, "cp", parallel_state.get_context_parallel_group)
        heads = config.num_attention_heads // tp.size()
        groups = config.num_query_groups // tp.size()
        self.repeat = heads // groups
        self.causal = attn_mask_type == AttnMaskType.causal
        self.scale = softmax_scale or 1.0 / math.sqrt(config.kv_channels)
        self.dropout = config.attention_dropout if attention_dropout is None else attention_dropout

    def forward(self, query, key, value, attention_mask, attn_mask_type=None,
                attention_bias=None, packed_seq_params=None):
        assert packed_seq_params is None and attention_bias is None
        assert attention_mask is None or self.causal, "only causal or unmasked attention"
        s, b = query.shape[0], query.shape[1]
        # [s, b, n, d] -> [b, n, s, d]
        q, k, v = (x.permute(1, 2, 0, 3) for x in (query, key, value))
        if self.repeat > 1:
            k = k.repeat_interleave(self.repeat, dim=1)
            v = v.repeat_interleave(self.repeat, dim=1)
        p = self.dropout if self.training else 0.0
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            if self.cp_group is None:
                out = F.scaled_dot_product_attention(q, k, v, dropout_p=p,
                                                     is_causal=self.causal, scale=self.scale)
            else:
                out = self._cp(q, k, v, p)
        # [b, n, s, d] -> [s, b, n*d]
        return out.permute(2, 0, 1, 3).reshape(s, b, -1)

    def _cp(self, q, k, v, p):
        assert self.causal, "context parallelism is for causal language models here"
        cp, r = self.cp_group.size(), self.cp_group.rank()
        c = q.shape[2] // 2
        ks = torch.distributed.nn.functional.all_gather(k.contiguous(), group=self.cp_group)
        vs = torch.distributed.nn.functional.all_gather(v.contiguous(), group=self.cp_group)

        def full(parts):
            # global chunk j < cp is the first half of rank j's, chunk 2cp-1-j its second half
            first = [x[:, :, :c] for x in parts]
            second = [x[:, :, c:] for x in reversed(parts)]
            return torch.cat(first + second, dim=2)

        kf, vf = full(ks), full(vs)
        outs = []
        for half, g in ((0, r), (1, 2 * cp - 1 - r)):
            qh = q[:, :, half * c:(half + 1) * c]
            n = (g + 1) * c
            mask = causal_lower_right(c, n)
            outs.append(F.scaled_dot_product_attention(qh, kf[:, :, :n], vf[:, :, :n],
                                                       attn_mask=mask, dropout_p=p,
                                                       scale=self.scale))
        return torch.cat(outs, dim=2)


def check_cp_attention(config, seq, batch=2):
    """Largest relative error of the cp attention's output and of its query/key/value gradients
    against one-GPU flash attention on the same random data (every rank computes the reference)."""
    cp_group = parallel_state.get_context_parallel_group()
    cp, r = cp_group.size(), cp_group.rank()
    tp = parallel_state.get_tensor_model_parallel_world_size()
    heads, dim = config.num_attention_heads // tp, config.kv_channels
    g = torch.Generator(device="cuda")
    g.manual_seed(7)
    shape = (seq, batch, heads, dim)
    full = [torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=g)
            for _ in range(4)]  # q, k, v, and the output's gradient
    attn = SDPAttention(config, 1, AttnMaskType.causal, "self").cuda().eval()  # no dropout
    c = seq // (2 * cp)
    idx = torch.cat([torch.arange(r * c, (r + 1) * c),
                     torch.arange((2 * cp - 1 - r) * c, (2 * cp - r) * c)]).cuda()
    ref_in = [x.clone().requires_grad_(True) for x in full[:3]]
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ref = F.scaled_dot_product_attention(*(x.permute(1, 2, 0, 3) for x in ref_in),
                                             is_causal=True, scale=attn.scale)
    ref = ref.permute(2, 0, 1, 3).reshape(seq, batch, -1)
    ref.backward(full[3].reshape(seq, batch, -1))
    loc_in = [x[idx].clone().requires_grad_(True) for x in full[:3]]
    out = attn(*loc_in, None)
    out.backward(full[3][idx].reshape(len(idx), batch, -1))

    def rel(a, b):
        return float((a.float() - b.float()).norm() / b.float().norm())

    return {"output": rel(out, ref[idx]),
            **{f"grad_{n}": rel(x.grad, y.grad[idx])
               for n, x, y in zip("qkv", loc_in, ref_in)}}
