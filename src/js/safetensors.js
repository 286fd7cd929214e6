// safetensors + config.json in Hugging Face layouts (docs/FORMATS.md) over the C API: a
// GPT-2 style model becomes a GPT2LMHeadModel and a Llama-style one a LlamaForCausalLM that
// PyTorch loads without conversion, and Hugging Face GPT-2 and Llama files come back as a
// Model.
import { CONFIG_BYTES, WfError, asBytes } from './runtime.js';
import { Model } from './model.js';
import { Tokenizer } from './tokenizer.js';

/**
 * The model's weights as Hugging Face files: {'model.safetensors': Uint8Array (float32),
 * 'config.json': string} and, when the model has a tokenizer, 'tokenizer.wft' (wasmformer's
 * own tokenizer file: Hugging Face has no equivalent of its char or BPE rules).
 * @example const files = exportSafetensors(model); // PyTorch: see tests/pytorch/hf_reference.py
 */
export function exportSafetensors(model) {
  model.idle();
  const rt = model.rt;
  return rt.withBuffer(16, (p) => {
    rt.u32.fill(0, p >>> 2, (p >>> 2) + 4);
    const status = rt.M._wf_safetensors_export(model.handle, p, p + 4, p + 8, p + 12);
    const b = p >>> 2, st = rt.u32[b] >>> 0, stLen = rt.i32[b + 1], cfg = rt.u32[b + 2] >>> 0, cfgLen = rt.i32[b + 3];
    try {
      model.call(status);
      const files = {
        'model.safetensors': rt.u8.slice(st, st + stLen),
        'config.json': new TextDecoder().decode(rt.u8.slice(cfg, cfg + cfgLen)), // a copy: the heap may be shared
      };
      if (model.tokenizer) files['tokenizer.wft'] = model.tokenizer.save();
      return files;
    } finally {
      rt.M._wf_buffer_free(st);
      rt.M._wf_buffer_free(cfg);
    }
  });
}

/**
 * A Model from Hugging Face files: files['config.json'] (string or bytes) and
 * files['model.safetensors'] (F32, F16, BF16 or F64), as exportSafetensors writes them or as
 * PyTorch saves a GPT2LMHeadModel or a LlamaForCausalLM (no grouped-query attention, RoPE
 * base 10000, unscaled); files['tokenizer.wft'] is used when present. Everything
 * is checked first; a bad file throws a WfError saying what is wrong.
 * @example const model = importSafetensors(rt, { 'config.json': cfg, 'model.safetensors': bytes });
 */
export function importSafetensors(rt, files) {
  if (!files || files['config.json'] === undefined || files['model.safetensors'] === undefined) {
    throw new WfError('WF_ERR_ARG', "importSafetensors needs files['config.json'] and files['model.safetensors']");
  }
  const cfg = asBytes(files['config.json'], "files['config.json']");
  const st = asBytes(files['model.safetensors'], "files['model.safetensors']");
  const h = rt.M._wf_model_create() >>> 0;
  if (!h) throw new WfError('WF_ERR_NOMEM', 'could not allocate a model handle');
  let tokenizer = null;
  try {
    const [pc, ps] = rt.allocMany([cfg.length, st.length]);
    try {
      rt.u8.set(cfg, pc);
      rt.u8.set(st, ps);
      const status = rt.M._wf_safetensors_import(h, pc, cfg.length, ps, st.length);
      if (status !== 0) rt.check(status, rt.cstring(rt.M._wf_model_error(h)));
    } finally {
      rt.free(pc);
      rt.free(ps);
    }
    if (files['tokenizer.wft'] !== undefined) {
      tokenizer = Tokenizer.load(rt, asBytes(files['tokenizer.wft'], "files['tokenizer.wft']"));
      const V = rt.withBuffer(CONFIG_BYTES, (p) => { rt.M._wf_model_get_config(h, p); return rt.readConfig(p).vocabSize; });
      if (tokenizer.vocabSize > V) {
        throw new WfError('WF_ERR_FORMAT', `tokenizer.wft has ${tokenizer.vocabSize} tokens but the model's vocabulary only ${V}`);
      }
    }
    const model = new Model(rt, h, tokenizer); // reads the config: can fail
    model.weightsOnly = true; // safetensors hold no optimizer state
    return model;
  } catch (e) {
    tokenizer?.dispose();
    rt.M._wf_model_free(h);
    throw e;
  }
}
