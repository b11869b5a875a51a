const ort = require('onnxruntime-node');
(async () => {
  const s = await ort.InferenceSession.create(process.argv[2], { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
  const L = 6, H = 8, D = 64, past = 10;
  for (const B of [1, 4, 8]) {
    const feeds = {
      input_ids: new ort.Tensor('int64', new BigInt64Array(B).fill(300n), [B, 1]),
      encoder_hidden_states: new ort.Tensor('float32', new Float32Array(B * 1500 * 512).fill(0.01), [B, 1500, 512]),
      use_cache_branch: new ort.Tensor('bool', Uint8Array.of(1), [1]),
    };
    for (let l = 0; l < L; l++) for (const p of ['decoder', 'encoder']) for (const k of ['key', 'value'])
      feeds[`past_key_values.${l}.${p}.${k}`] = new ort.Tensor('float32', new Float32Array(B * H * (p === 'decoder' ? past : 1500) * D).fill(0.01), [B, H, p === 'decoder' ? past : 1500, D]);
    for (let i = 0; i < 3; i++) await s.run(feeds);
    const t = performance.now(); const n = 8;
    for (let i = 0; i < n; i++) await s.run(feeds);
    const ms = (performance.now() - t) / n;
    console.log(`B=${B} ms/run ${ms.toFixed(1)} ms/item ${(ms / B).toFixed(1)}`);
  }
})();
