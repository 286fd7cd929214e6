// Types of the Node entry (node.js): everything of the browser entry (index.d.ts), plus
// checkpoint files. In Node, wasmUrl may also be a path or a file: URL, and
// createWorkerModel uses a worker thread.
import type { Model, LoadOptions, SaveOptions, LoraSettings, PeftExportOptions } from './index.js';

export * from './index.js';

/**
 * Writes the model's checkpoint to path atomically: a temporary file in the same folder,
 * flushed to disk, then renamed over path, so a crash leaves the old file or the new one.
 * A path that is a symbolic link writes the file it points to; the link stays. Resolves to
 * the bytes written. A failure rejects with Node's error code (ENOENT, EACCES, EROFS,
 * ENOSPC...) and a message naming path (not the temporary file).
 * @example
 * await saveModelFile(model, 'austen.wf');
 */
export function saveModelFile(model: Model, path: string, options?: SaveOptions): Promise<number>;

/**
 * A model from a checkpoint file.
 * @example
 * const model = await loadModelFile('austen.wf');
 * console.log(await model.generateText('Elizabeth', { maxTokens: 80 }));
 */
export function loadModelFile(path: string, options?: LoadOptions): Promise<Model>;

/**
 * Writes the model as Hugging Face files into dir (created if missing): model.safetensors,
 * config.json and, with a tokenizer, tokenizer.wft (and tokenizer.json for BPE and 'hf'
 * tokenizers); each atomically; then wasmformer.sha256, the SHA-256 of each (sha256sum's
 * format). Tokenizer files already in dir are removed first: a model without a tokenizer
 * never lands beside an earlier export's. Resolves to the names. A folder that cannot be
 * made rejects at once with WF_ERR_ARG naming it (/proc/exp, a path through a file).
 * @example
 * await exportSafetensorsDir(model, 'hf/');
 */
export function exportSafetensorsDir(model: Model, dir: string): Promise<string[]>;

/**
 * A model from a directory of Hugging Face files (config.json, model.safetensors and, if
 * present, tokenizer.wft or else tokenizer.json). In a folder exportSafetensorsDir wrote
 * (one with wasmformer.sha256), the tokenizer must be one that export wrote, with its
 * SHA-256: another is a WF_ERR_FORMAT, never paired with the weights.
 * @example
 * const model = await importSafetensorsDir('hf/');
 */
export function importSafetensorsDir(dir: string, options?: LoadOptions): Promise<Model>;

/**
 * Writes the model's LoRA adapters in PEFT's layout into dir (created if missing):
 * adapter_model.safetensors and adapter_config.json, each atomically. Resolves to the names.
 * A folder that cannot be made rejects at once with WF_ERR_ARG naming it.
 * @example
 * await exportPeftDir(model, 'adapter/', { baseModel: 'HuggingFaceTB/SmolLM-135M' });
 */
export function exportPeftDir(model: Model, dir: string, options?: PeftExportOptions): Promise<string[]>;

/**
 * Puts the PEFT LoRA adapters of a directory (adapter_config.json, adapter_model.safetensors)
 * on the model, whose base must be theirs. Resolves to the adapters' settings.
 * @example
 * await importPeftDir(model, 'adapter/');
 */
export function importPeftDir(model: Model, dir: string): Promise<LoraSettings>;
