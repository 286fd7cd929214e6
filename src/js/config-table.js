// The config table of the C core seen from JavaScript: one row per field of wf_config and
// of wf_optim (include/wasmformer.h), in struct order. Rows are data only; config.js turns
// them into defaults, checks and the JS form, the CLI into flags, the page into its form,
// and tests/js/config.test.mjs holds this file against the core (defaults, struct layout)
// and index.d.ts (field lists).
//
// A row: name (the JS name), c (the C field), type, default (in the JS form), the range
// the core accepts (min, max; `above`/`below`: the bound itself is excluded) or the enum's
// values (by C value: values[i] is i), and one line of meaning.
//   type  'enum'  int32 in C, a string in JS (values)
//         'bool'  int32 0/1 in C, a boolean in JS
//         'int'   int32         'uint'  uint32         'float'  float (32-bit)
// Relations between fields (nHead divides dModel; nEncLayer and maxBeam only for an
// encoder-decoder) are the core's check (wf_config_check), not the table's.

const INT32_MAX = 2147483647;

/** wf_config: what the model is. */
export const CONFIG_TABLE = [
  { name: 'arch', c: 'arch', type: 'enum', default: 'decoder', values: ['decoder', 'encoder', 'encoder-decoder'],
    meaning: 'model family: a decoder (GPT), an encoder, or an encoder-decoder' },
  { name: 'norm', c: 'norm', type: 'enum', default: 'layernorm', values: ['layernorm', 'rmsnorm'],
    meaning: 'normalization layer' },
  { name: 'block', c: 'block', type: 'enum', default: 'pre_ln', values: ['pre_ln', 'post_ln'],
    meaning: 'where the norm sits around each sublayer: before it, or after the residual add' },
  { name: 'activation', c: 'activation', type: 'enum', default: 'gelu', values: ['gelu', 'relu', 'swiglu'],
    meaning: 'activation of the feed-forward sublayer' },
  { name: 'positions', c: 'positions', type: 'enum', default: 'learned', values: ['learned', 'sinusoidal', 'rope'],
    meaning: 'position information: a learned table, fixed sinusoids, or rotary' },
  { name: 'tiedHead', c: 'tied_head', type: 'bool', default: true,
    meaning: 'the output head is the token embedding (GPT-2); false: its own matrix' },
  { name: 'bias', c: 'bias', type: 'bool', default: true,
    meaning: 'linear layers and LayerNorms have biases; false: none (Llama)' },
  { name: 'vocabSize', c: 'vocab_size', type: 'int', default: 96, min: 2, max: 1 << 24,
    meaning: 'token ids the model knows (V)' },
  { name: 'context', c: 'context', type: 'int', default: 64, min: 1, max: 1 << 16,
    meaning: 'longest sequence the model sees at once (T)' },
  { name: 'nLayer', c: 'n_layer', type: 'int', default: 4, min: 1, max: 1024,
    meaning: 'transformer blocks (L); the decoder\'s in an encoder-decoder' },
  { name: 'nHead', c: 'n_head', type: 'int', default: 4, min: 1, max: 1 << 20,
    meaning: 'attention heads (NH); must divide dModel' },
  { name: 'dModel', c: 'd_model', type: 'int', default: 128, min: 1, max: 1 << 20,
    meaning: 'width of the residual stream (C)' },
  { name: 'dFF', c: 'd_ff', type: 'int', default: 512, min: 1, max: 1 << 20,
    meaning: 'width of the feed-forward hidden layer' },
  { name: 'normEps', c: 'norm_eps', type: 'float', default: 1e-5, min: 0, max: 1, above: true, below: true,
    meaning: 'epsilon inside the norm\'s square root' },
  { name: 'seed', c: 'seed', type: 'uint', default: 1337, min: 0, max: 4294967295,
    meaning: 'seeds the weights and the model\'s training random streams' },
  { name: 'nEncLayer', c: 'n_enc_layer', type: 'int', default: 0, min: 0, max: 1024,
    meaning: 'an encoder-decoder\'s encoder layers (0 for the other archs)' },
  { name: 'dropout', c: 'dropout', type: 'float', default: 0, min: 0, max: 1, below: true,
    meaning: 'drop probability of embeddings and sublayer outputs in training steps' },
  { name: 'maxBeam', c: 'max_beam', type: 'int', default: 4, min: 1, max: 64,
    meaning: 'widest beam an encoder-decoder decodes with' },
];

/** wf_optim: how the model trains (AdamW and its learning-rate schedule). */
export const OPTIM_TABLE = [
  { name: 'lr', c: 'lr', type: 'float', default: 3e-4, min: 0, max: Infinity,
    meaning: 'peak learning rate' },
  { name: 'beta1', c: 'beta1', type: 'float', default: 0.9, min: 0, max: 1, below: true,
    meaning: 'AdamW first-moment decay rate' },
  { name: 'beta2', c: 'beta2', type: 'float', default: 0.95, min: 0, max: 1, below: true,
    meaning: 'AdamW second-moment decay rate' },
  { name: 'eps', c: 'eps', type: 'float', default: 1e-8, min: 0, max: Infinity, above: true,
    meaning: 'AdamW denominator epsilon' },
  { name: 'weightDecay', c: 'weight_decay', type: 'float', default: 0.1, min: 0, max: Infinity,
    meaning: 'decoupled weight decay, on matrices and embeddings only' },
  { name: 'warmup', c: 'warmup', type: 'int', default: 0, min: 0, max: INT32_MAX,
    meaning: 'steps of linear warmup to lr' },
  { name: 'decaySteps', c: 'decay_steps', type: 'int', default: 0, min: 0, max: INT32_MAX,
    meaning: 'then steps of cosine decay to lr * minLrRatio; 0: constant after warmup' },
  { name: 'minLrRatio', c: 'min_lr_ratio', type: 'float', default: 0.1, min: 0, max: 1,
    meaning: 'the decayed learning rate as a fraction of lr' },
  { name: 'gradClip', c: 'grad_clip', type: 'float', default: 1, min: 0, max: Infinity,
    meaning: 'clip the global gradient norm to this; 0: no clipping' },
  { name: 'start', c: 'start', type: 'int', default: 0, min: 0, max: INT32_MAX,
    meaning: 'the step where warmup and decay start' },
];
