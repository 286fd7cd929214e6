// Types of the Node entry (node.js): everything of the browser entry (index.d.ts), plus
// checkpoint files. In Node, wasmUrl may also be a path or a file: URL, and
// createWorkerModel uses a worker thread.
import type { Model, LoadOptions, ModelLoadOptions, SaveOptions, LoraSettings, PeftExportOptions } from './index.js';

export * from './index.js';

/**
 * Writes the model's checkpoint to path atomically: a temporary file in the same folder,
 * flushed to disk, then renamed over path, so a crash leaves the old file or the new one.
 * Resolves to the bytes written.
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
export function loadModelFile(path: string, options?: ModelLoadOptions): Promise<Model>;

/**
 * Writes the model as Hugging Face files into dir (created if missing): model.safetensors,
 * config.json and, with a tokenizer, tokenizer.wft (and tokenizer.json for BPE and 'hf'
 * tokenizers); each atomically. Resolves to the names.
 * @example
 * await exportSafetensorsDir(model, 'hf/');
 */
export function exportSafetensorsDir(model: Model, dir: string): Promise<string[]>;

/**
 * A model from a directory of Hugging Face files (config.json, model.safetensors and, if
 * present, tokenizer.wft or else tokenizer.json).
 * @example
 * const model = await importSafetensorsDir('hf/');
 */
export function importSafetensorsDir(dir: string, options?: ModelLoadOptions): Promise<Model>;

/**
 * Writes the model's LoRA adapters in PEFT's layout into dir (created if missing):
 * adapter_model.safetensors and adapter_config.json, each atomically. Resolves to the names.
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
