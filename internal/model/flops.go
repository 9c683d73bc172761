package model

// flopsPerSample is megatron/training/training.py num_floating_point_operations
// for a batch of one sample of seq_length tokens (the BSHD path:
// total_real_tokens = seq_length, seqlen_squared_sum = seq_length^2), for
// a standard transformer (no hybrid or linear-attention layers).
func flopsPerSample(c *Config, paddedVocab int) float64 {
	const fwdBwd, fma = 3, 2
	tokens := float64(c.SeqLength)
	seqSq := float64(c.SeqLength) * float64(c.SeqLength)
	h := c.HiddenSize
	groups := c.queryGroups()

	numDense, numMoE, lastMoE := c.layerCounts()
	routedTo := 0
	if c.NumExperts > 0 {
		routedTo = c.MoERouterTopK
	}
	mtp := c.MTPNumLayers
	numMoE += lastMoE * mtp
	numDense += (1 - lastMoE) * mtp
	numLayers := c.NumLayers + mtp

	moeFFN := c.MoEFFNHiddenSize
	if moeFFN == 0 {
		moeFFN = c.FFNHiddenSize
	}
	shared := c.MoESharedExpertIntermediateSize
	ffnExp := 2
	if c.Swiglu {
		ffnExp = 3
	}

	var attnTerm, coreTerm float64
	if c.MultiLatentAttention {
		var qTerm int
		if c.QLoRARank == 0 {
			qTerm = h * c.NumAttentionHeads * (c.QKHeadDim + c.QKPosEmbHeadDim)
		} else {
			qTerm = c.QLoRARank * (h + c.NumAttentionHeads*(c.QKHeadDim+c.QKPosEmbHeadDim) + 1)
		}
		attnTerm = float64(fwdBwd * fma * (qTerm +
			c.KVLoRARank*(h+c.NumAttentionHeads*(c.QKHeadDim+c.VHeadDim)+1) +
			h*c.QKPosEmbHeadDim +
			(c.NumAttentionHeads*c.VHeadDim)*h))
		coreTerm = float64(fwdBwd*fma) * (float64(c.NumAttentionHeads*(c.QKHeadDim+c.QKPosEmbHeadDim))/2 +
			float64(c.NumAttentionHeads*c.VHeadDim)/2)
	} else {
		q := c.KVChannels * c.NumAttentionHeads
		kv := c.KVChannels * groups
		gate := 0
		if c.AttentionOutputGate {
			gate = q
		}
		attnTerm = float64(fwdBwd * fma * (h*(q+kv+kv+gate) + q*h))
		coreTerm = float64(fwdBwd*fma*q) / 2 * 2
	}
	selfAttn := attnTerm * float64(numLayers)
	core := coreTerm * float64(numLayers)

	var routed float64
	if c.MoELatentSize == 0 {
		routed = float64(moeFFN * routedTo * ffnExp)
	} else {
		routed = prod(moeFFN, routedTo, ffnExp, c.MoELatentSize)/float64(h) + float64(2*c.MoELatentSize)
	}
	mlp := float64(fwdBwd*fma*h) * (float64(c.FFNHiddenSize*ffnExp*numDense) +
		routed*float64(numMoE) +
		float64(shared*ffnExp*numMoE))
	perToken := mlp + selfAttn +
		float64(fwdBwd*fma*mtp*(3*h+2*h*h)) +
		prod(fwdBwd*fma, h, paddedVocab, mtp+1)
	return tokens*perToken + seqSq*core
}
