import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmTokenizer } from '@switchboard/inference';
import { writeDecoderLlmStandIn } from './decoder-llm.stand-in';
import { onnxSignature } from './onnx-signature';

describe('decoder-only chat LLM stand-in (small)', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'decoder-llm-stand-in-'));
    await writeDecoderLlmStandIn(join(dir, 'llm'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const readJson = async (file: string): Promise<any> => JSON.parse(await readFile(join(dir, 'llm', file), 'utf8'));

  it("writes onnx/model.onnx with optimum's text-generation-with-past signature", async () => {
    const { vocab_size: vocab } = await readJson('config.json');
    const layers = [0, 1];
    expect(await onnxSignature(join(dir, 'llm', 'onnx', 'model.onnx'))).toEqual({
      inputs: [
        'input_ids int64 [batch_size, sequence_length]',
        'attention_mask int64 [batch_size, past_sequence_length + 1]',
        'position_ids int64 [batch_size, sequence_length]',
        ...layers.flatMap((layer) => [
          `past_key_values.${layer}.key float32 [batch_size, 2, past_sequence_length, 16]`,
          `past_key_values.${layer}.value float32 [batch_size, 2, past_sequence_length, 16]`,
        ]),
      ],
      outputs: [
        `logits float32 [batch_size, sequence_length, ${vocab}]`,
        ...layers.flatMap((layer) => [
          `present.${layer}.key float32 [batch_size, 2, past_sequence_length + 1, 16]`,
          `present.${layer}.value float32 [batch_size, 2, past_sequence_length + 1, 16]`,
        ]),
      ],
    });
  });

  it('writes Qwen2.5-style config, generation config and ChatML tokenizer files that agree with each other', async () => {
    const config = await readJson('config.json');
    const generation = await readJson('generation_config.json');
    const tokenizerConfig = await readJson('tokenizer_config.json');
    const tokenizer = LlmTokenizer.fromJson(await readFile(join(dir, 'llm', 'tokenizer.json'), 'utf8'), 'test');
    expect(config).toMatchObject({ model_type: 'qwen2', num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16 });
    // Like real exports, the logits are padded past the tokenizer's last id.
    expect(config.vocab_size % 64).toBe(0);
    expect(config.vocab_size).toBeGreaterThanOrEqual(tokenizer.vocabSize);
    expect(config.eos_token_id).toBe(tokenizer.idOf('<|im_end|>'));
    expect(generation.eos_token_id).toEqual([tokenizer.idOf('<|im_end|>'), tokenizer.idOf('<|endoftext|>')]);
    expect(tokenizerConfig.eos_token).toBe('<|im_end|>');
    expect(tokenizerConfig.chat_template).toContain("'<|im_start|>' + message.role");
    expect(tokenizer.isSpecial(tokenizer.idOf('<|im_start|>')!)).toBe(true);
    expect(tokenizer.isSpecial(tokenizer.idOf('<tool_call>')!)).toBe(false);
  });

  it('builds bit-identical models from the same seed and different weights from another', async () => {
    await writeDecoderLlmStandIn(join(dir, 'again'));
    await writeDecoderLlmStandIn(join(dir, 'other'), { seed: 99 });
    const original = await readFile(join(dir, 'llm', 'onnx', 'model.onnx'));
    expect(Buffer.compare(await readFile(join(dir, 'again', 'onnx', 'model.onnx')), original)).toBe(0);
    expect(Buffer.compare(await readFile(join(dir, 'other', 'onnx', 'model.onnx')), original)).not.toBe(0);
  });
});
