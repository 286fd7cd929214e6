// What both entry points (index.js, node.js) export besides the functions bound to their
// platform (loader.js's makeApi).
export { WfError } from './errors.js';
export { CONFIG_FIELDS, DEFAULT_PRESET, OPTIM_FIELDS, PRESETS, PRESET_STEPS, resolveConfig } from './config.js';
export { TRAIN_DEFAULTS } from './training.js';
export { AUTO_PRESETS, choosePreset, expectedLoss, lossFloor, mayWin, measurePresetSpeeds } from './auto.js';
export { GENERATE_DEFAULTS } from './generation.js';
export { Model, saveModel } from './model.js';
export { Tokenizer } from './tokenizer.js';
export { Encoder, ENCODER_DEFAULTS } from './encoder.js';
export { Seq2Seq, SEQ2SEQ_DEFAULTS } from './seq2seq.js';
export { exportSafetensors } from './safetensors.js';
export { WorkerModel, WorkerSeq2Seq } from './worker-client.js';
