// What Encoder and Seq2Seq share: a view of one Model for an architecture, which owns the
// model when it created it (createEncoder, createSeq2Seq) and borrows it when given one
// (Encoder.from, Seq2Seq.from): disposing a borrowing view leaves the caller's model alone.
import { DISPOSE, WfError } from './errors.js';
import { modelHandle } from './model.js';

export class ModelView {
  #model;
  #owns;

  /** @internal */
  constructor(model, owns) {
    this.#model = model;
    this.#owns = owns;
  }

  /** A model for a view of `arch`, or a WF_ERR_STATE that says what it is. */
  static checkArch(model, arch, name) {
    const have = model.config.arch;
    if (have !== arch) throw new WfError('WF_ERR_STATE', `${name} needs an ${arch}; this model is a${/^[aeiou]/.test(have) ? 'n' : ''} ${have}`);
    return model;
  }

  /** The underlying Model: tensors(), getTensor(), setTensor(), memory(), optimizer, save(). */
  get model() {
    if (!this.#model) throw new WfError('WF_ERR_DISPOSED', 'this model has been disposed');
    return this.#model;
  }

  /** @internal The model's ModelHandle. */
  get core() { return modelHandle(this.model); }

  /** The model's config (strings and booleans). */
  get config() { return this.model.config; }
  /** Optimizer steps taken. */
  get step() { return this.model.step; }
  /** Number of weights. */
  get paramCount() { return this.model.paramCount; }

  /** Changes optimizer settings (lr, beta1, beta2, eps, weightDecay, warmup, decaySteps,
   * minLrRatio, gradClip); the rest stay. Returns all of them. */
  setOptimizer(settings) { return this.model.setOptimizer(settings); }

  /** Ends the view. A view that created its model frees it (and its tokenizer's memory); one
   * made by from(model) leaves the model to its owner. Using the view afterwards throws
   * WF_ERR_DISPOSED. */
  dispose() {
    if (this.#owns) this.#model?.dispose();
    this.#model = null;
  }

  [DISPOSE]() { this.dispose(); }
}
