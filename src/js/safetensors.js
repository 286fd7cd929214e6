// safetensors + config.json in Hugging Face layouts (docs/FORMATS.md) over the C API: a
// GPT-2 style model becomes a GPT2LMHeadModel, the same with RoPE (micro, the default) a
// GPTNeoXForCausalLM and a Llama-style one a LlamaForCausalLM that PyTorch loads without
// conversion, and Hugging Face GPT-2, GPT-NeoX and Llama files come back as a Model.
import { WfError } from './errors.js';
import { asBytes } from './runtime.js';
import { Model, modelHandle } from './model.js';
import { ModelHandle } from './handle.js';

/**
 * The model's weights as Hugging Face files: {'model.safetensors': Uint8Array (float32),
 * 'config.json': string} and, when the model has a tokenizer, 'tokenizer.wft' (wasmformer's
 * own tokenizer file, exact for every kind) and, for char, BPE and tokenizer.json
 * tokenizers, 'tokenizer.json' (string), which the Hugging Face libraries read and encode
 * alike. A model with LoRA adapters in a Hugging Face class's layout is refused
 * (WF_ERR_STATE): mergeLora() first, or export the base without them and exportPeft.
 * @example const files = exportSafetensors(model); // PyTorch: see tests/pytorch/hf_reference.py
 */
export function exportSafetensors(model) {
  const core = modelHandle(model);
  const { st, config } = core.rt.modelExportSafetensors(core.idle());
  const files = { 'model.safetensors': st, 'config.json': config };
  if (core.tokenizer) {
    files['tokenizer.wft'] = core.tokenizer.save();
    if (['char', 'bpe', 'hf'].includes(core.tokenizer.kind)) {
      try {
        files['tokenizer.json'] = core.tokenizer.saveJSON();
      } catch (e) {
        // a BPE with two tokens of the same bytes has no tokenizer.json form; the .wft keeps it
        if (e.code !== 'WF_ERR_UNSUPPORTED') throw e;
      }
    }
  }
  return files;
}

/**
 * A Model from Hugging Face files: files['config.json'] (string or bytes) and
 * files['model.safetensors'] (F32, F16, BF16 or F64), as exportSafetensors writes them or as
 * PyTorch saves a GPT2LMHeadModel, a GPTNeoXForCausalLM (sequential residual, rotary_pct 1)
 * or a LlamaForCausalLM (grouped-query attention and any RoPE base; no RoPE scaling); the tokenizer from files['tokenizer.wft'] when present, else
 * files['tokenizer.json'] (a Hugging Face tokenizer, string or bytes). Everything is checked
 * first; a bad file throws a WfError saying what is wrong.
 * @example const model = importSafetensors(rt, { 'config.json': cfg, 'model.safetensors': bytes });
 */
export function importSafetensors(rt, files) {
  if (!files || files['config.json'] === undefined || files['model.safetensors'] === undefined) {
    throw new WfError('WF_ERR_ARG', "importSafetensors needs files['config.json'] and files['model.safetensors']");
  }
  const config = asBytes(files['config.json'], "files['config.json']");
  const st = asBytes(files['model.safetensors'], "files['model.safetensors']");
  const name = files['tokenizer.wft'] !== undefined ? 'tokenizer.wft' : files['tokenizer.json'] !== undefined ? 'tokenizer.json' : null;
  const tok = name && { bytes: asBytes(files[name], `files['${name}']`), name };
  return new Model(ModelHandle.fromSafetensors(rt, config, st, tok ?? undefined));
}
