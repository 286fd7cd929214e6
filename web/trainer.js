// The language model's training controller: a GPT in a Web Worker (the package's
// WorkerModel), trained with pause, resume and stop, its progress on the stats and the loss
// chart, the record autosave keeps, and the model coming back from a record or a file.
//
// A training is ONE run of the model's (the core's: its batches, schedule, validation and
// roll-back copy live in the worker's model): startRun sends the text once, and calls of
// continueRun drive the run. Pausing aborts a call (the steps taken stay, and the run);
// resuming makes the next call. A sample or a save while training (autosave, download) runs
// between two calls the same way, and the run goes on exactly: nothing is begun again and the
// text is not sent again. The run is in the model's file too: a restored autosave goes on
// with it.
import { OPTIM_FIELDS, createWorkerModel, loadWorkerModel } from './pkg/src/js/index.js';
import { LossChart } from './chart.js';
import { NOVELS } from './corpus.js';
import * as fmt from './format.js';
import { overfitting, validationNoise } from './judge.js';
import { runInfo, tokensPerChar } from './compare.js';
import { clearSamples, showSample } from './thennow.js';

const $ = (id) => document.getElementById(id);
const AUTOSAVE_MS = 60_000;
// The samples shown while training: from the same start (a new line) and seed each time, so
// what changes between two is the model. Each costs its own time and a restart of training
// (the continueRun call ends for it and another starts); a validation's sample is skipped
// when the samples would pass their budget, a share of the training time (#samples'
// data-budget: 3 %).
const SAMPLE_PROMPT = '';
const SAMPLE = { maxTokens: 120, temperature: 0.8, seed: 1 };
/** A random name for a model's autosave records (getRandomValues: also on plain http). */
const newModelId = () => Array.from(crypto.getRandomValues(new Uint32Array(4)), (x) => x.toString(16).padStart(8, '0')).join('');
// What the loop knows of the break between two continueRun calls: when the call before ended, the
// time the break's jobs took, whether one was a sample, and whether the call after still has
// to report how long it took to start (its first progress report tells).
const BREAK = { ended: null, jobsMs: 0, sampled: false, restarting: false };
const UNTIL_STOPPED = 10_000_000; // the step schedule of an open run: warmup, then a decay too slow to see
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** The models made elsewhere (info().origin, the core's wf_origin): fine-tuned, not continued. */
const PRETRAINED = new Set(['safetensors', 'gguf', 'llama2c']);

export class TrainingController {
  /**
   * app: {error(text), autosave(record) -> Promise, autosaveOn(), threads(n), newRun()};
   * settings: the SettingsForm; hooks: changed() (the buttons may change), progressed() (a
   * progress report came in), validated() (a validation came in), model(wm) (a
   * new model is in place), quiet() -> Promise (everything else the model runs has ended)
   */
  constructor(app, settings, hooks) {
    this.app = app;
    this.settings = settings;
    this.hooks = hooks;
    this.chart = new LossChart($('loss-chart'), { legend: $('chart-past'), why: $('chart-why'), caption: $('loss-help') });
    this.wm = null;
    this.phase = 'none'; // none | creating | training | pausing | paused | stopped | done
    this.run = null;     // {target, seconds, secondsDone, open, startStep, abort, reason, saves, activeMs, chunkStart, text}
    this.lastSave = 0;
    this.train = null;   // the settings of the run: {config, train, tokenizer}
    this.samples = null; // this run's samples' cost: {ms, n, skipped, longest, last} (ms)
    this.newSampleBudget();
    this.modelId = null; // names the model in its autosave records
    this.from = null;    // the file, folder or autosave the model came from (null: made here)
    this.trainedMs = null; // this model's time in train calls, over all its runs (null: not known, a model restored or opened)
  }

  /** Training, or on its way to or from it: the model is not free. */
  get running() { return this.phase === 'training' || this.phase === 'pausing' || this.phase === 'creating'; }

  /** The status under the buttons. A screen reader hears it through a live region of its own
   * (#train-said), unless quiet: the countdown of every progress report would talk over
   * everything; it hears a run's start, each validation, and where a run ends. */
  setStatus(text, { quiet = false } = {}) {
    $('train-status').textContent = text;
    if (!quiet) this.say(text);
  }

  say(text) {
    if ($('train-said').textContent !== text) $('train-said').textContent = text;
  }

  /** What replacing the model would lose, in words ("the model trained for 1,234 steps", "the
   * model opened from x.wf"), or null: no model, or a new one that has not taken a step. A
   * model opened or restored counts however many steps it says (a Hugging Face folder says none). */
  held() {
    if (!this.wm) return null;
    if (this.wm.step > 0) return `the model trained for ${fmt.count(this.wm.step)} steps`;
    return this.from ? `the model opened from ${this.from}` : null;
  }

  async startNew() {
    // a trained or opened model is replaced only when the user says so (its autosave stays
    // until the new one is saved over it)
    if (!this.app.mayReplace(this.held(), 'a new one')) return;
    await this.settings.resolveAuto({ click: true }); // preset 'auto': the size for this run's time, said in one line
    const s = this.settings.read();
    if (!this.settings.corpus.text.length) throw new Error('the text is empty: pick a novel, paste some text or open a file first');
    await this.settings.check(); // the settings of this moment, not of the last debounced check
    if (this.settings.problem) throw new Error(this.settings.problem);
    await this.stopAndWait();
    this.app.newRun?.();
    this.phase = 'creating';
    this.hooks.changed();
    this.setStatus('Starting the model’s worker…');
    // the run before stays on the chart, faded, named by its settings and what it trained
    if (this.train && this.wm?.step > 0 && this.chart.train.length) this.chart.keep(this.describe(this.train));
    else this.chart.clear();
    this.wm?.dispose();
    this.wm = null;
    this.clearView();
    this.settings.bpeTokens = null;
    try {
      this.wm = await createWorkerModel({ ...s.config, batchSize: s.train.batchSize, lr: s.train.lr });
      this.modelId = newModelId();
      this.trainedMs = 0;
      this.opened = false;
      this.pretrained = false;
      this.from = null;
      this.showFinetune();
    } catch (e) {
      this.phase = 'none';
      this.setStatus('No model yet.');
      throw e;
    }
    this.train = s;
    this.chart.setGuess(Math.log(this.wm.config.vocabSize));
    this.hooks.model(this.wm);
    await this.runFor(s.train);
  }

  async trainMore() {
    const s = this.settings.readRun(); // the run's settings: the new-model form's architecture is not this model's
    if (!this.settings.corpus.text.length) throw new Error('the text is empty: pick a novel, paste some text or open a file first');
    // an opened model fine-tuned with LoRA: adapters first, the model's own weights frozen
    if (!$('finetune-row').hidden && $('finetune-lora').checked && !this.wm.snapshot.lora) {
      await this.wm.addLora({ rank: 8 });
      await this.wm.info();
    }
    this.showFinetune();
    this.train = { train: s.train, tokenizer: s.tokenizer, config: this.wm.config };
    await this.runFor(s.train);
  }

  /** The model loaded, on the left: what it is and how "Train this model … more" trains it,
   * in one line, and its own figures (not the new-model form's). */
  showLoaded() {
    const wm = this.wm, info = wm?.snapshot;
    $('loaded').hidden = !wm;
    this.settings.setLoaded(wm ? info : null);
    if (!wm) return;
    $('loaded-params').textContent = fmt.count(info.paramCount);
    $('loaded-vocab').textContent = fmt.count(wm.config.vocabSize);
    $('loaded-memory').textContent = fmt.bytes(info.memory.total);
    $('loaded-what').textContent = this.what();
  }

  /** What the model loaded is, and what training it more does. */
  what() {
    const info = this.wm.snapshot, steps = `${fmt.count(info.step)} step${info.step === 1 ? '' : 's'}`;
    if (!this.from) return `Made here: ${this.wm.config.nLayer} layers, width ${this.wm.config.dModel}.`;
    if (this.pretrained && !info.lora) {
      return `${this.from}: a pretrained model. Training it more fine-tunes it with LoRA, the default here: small adapters learn your text, its own weights stay as they are.`;
    }
    return info.lora ? `${this.from}: fine-tuned with LoRA for ${steps}; training it more goes on with its adapters.`
      : `${this.from}: trained for ${steps}; training it more continues its training as it was (all its weights).`;
  }

  /** What fine-tuning trains, in words: the adapters and their share of the model. */
  showFinetune() {
    const info = this.wm?.snapshot, lora = info?.lora;
    this.showLoaded();
    $('finetune-row').hidden = !this.opened || !!lora;
    $('finetune-status').textContent = lora
      ? `LoRA adapters (rank ${lora.rank}) on ${lora.targets.join(', ')}: ${fmt.count(info.trainable)} of ${fmt.count(info.paramCount)} `
        + `parameters train (${(100 * info.trainable / info.paramCount).toFixed(1)} %); the rest stays as it was.`
      : '';
    $('finetune-status').hidden = !lora;
  }

  /** A run of the form's length: a time budget, until stopped, or a number of steps. */
  runFor(t) {
    if (t.seconds) return this.runTo({ seconds: t.seconds });
    // until stopped: a schedule so long that after its warmup the rate barely moves
    return this.runTo({ steps: t.untilStopped ? UNTIL_STOPPED : t.steps, open: t.untilStopped });
  }

  /** One new run of the model's: to step (now + steps), or of `seconds` of training, with a
   * new learning-rate schedule; open: a run with no end but the user's stop. The text goes
   * to the worker here, once. */
  async runTo({ steps, seconds, open = false }) {
    const start = this.wm.step;
    this.newSampleBudget(); // the samples' share is of this run's training time
    this.run = {
      target: seconds ? null : start + steps, seconds: seconds ?? null, secondsDone: 0, open, text: true,
      startStep: start, activeMs: 0, reason: null, saves: [], abort: null, chunkStart: null, ...BREAK,
    };
    // the chart's clock: this model's training time, over its runs
    this.run.t0 = this.chart.lastTime();
    this.chart.setTarget(seconds || open ? 0 : this.run.target, seconds ? this.run.t0 + seconds : 0);
    this.runText = this.settings.corpus.name;
    try {
      await this.wm.startRun(this.settings.corpus.text, this.runOptions({ steps, seconds }));
      await this.measureText();
    } catch (e) {
      this.run = null;
      this.phase = this.wm.step > 0 ? 'stopped' : 'none';
      this.setStatus(this.wm.step > 0 ? `Stopped at step ${fmt.count(this.wm.step)}.` : 'No model yet.');
      this.hooks.changed();
      throw e;
    }
    await this.loop();
  }
  /** A model's run, for the chart's legend (compare.js runInfo): its text, tokenizer, size; its
   * steps, time and last validation come from the chart's points (a run stopped early says
   * its time, not the one asked for). */
  describe(s) {
    return runInfo({
      config: s.config, tokenizer: this.wm?.snapshot?.tokenizer, train: s.train, text: this.runText ?? this.settings.corpus.name,
      params: this.wm?.paramCount ?? 0, perChar: this.chart.perChar,
    });
  }

  /** The tokens a character of the run's text (for the chart's bits per character), once the
   * model has its tokenizer; a learned BPE's token count goes to the text's figures too. */
  async measureText() {
    const per = await tokensPerChar(this.wm, this.settings.corpus.text, this.train.train.valFraction ?? 0);
    this.chart.setUnits(per);
    if ($('tokenizer-kind').value === 'bpe' && this.wm.snapshot.tokenizer?.kind === 'bpe') this.settings.setBpeTokens(per.tokens);
    this.chart.setRun(this.describe(this.train));
  }

  /** Where the run stands, in words: "step 120 of 400", "step 120, 0:42 of 1:00", "step 120". */
  where(step) {
    const run = this.run;
    if (run.seconds) return `step ${fmt.count(step)}, ${fmt.duration(run.secondsDone)} of ${fmt.duration(run.seconds)}`;
    return run.open ? `step ${fmt.count(step)}` : `step ${fmt.count(step)} of ${fmt.count(run.target)}`;
  }

  async resume() {
    if (this.phase !== 'paused' || !this.run) return;
    this.run.reason = null;
    if (!this.run.text) {
      // a run restored from a file: its text goes to the worker once, and it goes on exactly
      await this.wm.startRun(this.settings.corpus.text, this.run.legacy
        ? { ...this.runOptions({ steps: this.run.target - this.wm.step }), keepSchedule: true } : { keepSchedule: true, onWarning: this.warned });
      this.run.text = true;
    }
    await this.loop();
  }

  /** A text with characters an opened model's tokenizer does not know: said under the status. */
  warned = (message) => {
    const said = `${$('finetune-status').textContent.split(' Note:')[0]} Note: ${message}`.trim();
    if ($('finetune-status').textContent !== said) $('finetune-status').textContent = said;
    $('finetune-status').hidden = false;
  };

  /** The options of a new run (startRun): its length, and the form's settings. */
  runOptions({ steps, seconds }) {
    const s = this.train.train;
    const opts = {
      batchSize: s.batchSize, valFraction: s.valFraction, evalInterval: s.evalInterval ?? 0, evalBatches: s.evalBatches,
      onWarning: this.warned,
    };
    // a time budget: the lr follows the clock from the run's peak; else the step schedule's warmup
    if (seconds) Object.assign(opts, { seconds, warmupFraction: 0.05 });
    else opts.steps = steps;
    for (const { name } of OPTIM_FIELDS) if (s[name] !== undefined && !(seconds && name === 'warmup')) opts[name] = s[name];
    if (!this.wm.snapshot.tokenizer) opts.tokenizer = this.train.tokenizer;
    return opts;
  }

  /** Whether the run has reached its end (the model's run says so). */
  finished() {
    const r = this.wm.snapshot.run;
    return !!r && r.finished && !this.run.open;
  }

  /** Calls continueRun until the run ends, a pause or a stop. Between two calls it runs the
   * saves that asked for an idle model (checkpoint); the run is not begun again. */
  async loop() {
    const run = this.run, wm = this.wm;
    this.phase = 'training';
    this.hooks.changed();
    this.lastSave = performance.now();
    const flush = async () => {
      while (run.saves.length) {
        const t0 = performance.now();
        await run.saves.shift()();
        run.jobsMs += performance.now() - t0;
      }
    };
    let first = true;
    Object.assign(run, BREAK); // a pause's break is the user's, not a sample's
    for (;;) {
      if (this.finished() || run.reason === 'stop') break;
      if (run.reason === 'pause') {
        this.phase = 'paused';
        await flush();
        this.setStatus(`Paused at ${this.where(wm.step)}. Generate, look at the attention, or resume.`);
        $('stat-eta').textContent = '–';
        this.hooks.changed();
        await this.autosave();
        return;
      }
      run.abort = new AbortController();
      // said once a run (or resume): the calls after a sample or a save go on quietly
      this.setStatus(this.toGo(wm.step), { quiet: !first });
      first = false;
      // a break a sample forced: what it cost besides the jobs' own time (the call's end, the
      // model's info, the messages) is the sample's, and so is the next call's start
      const restart = run.sampled;
      if (restart) this.addSampleCost(performance.now() - run.ended - run.jobsMs);
      Object.assign(run, BREAK, { restarting: restart });
      run.chunkStart = performance.now();
      let failure = null;
      try {
        await wm.continueRun({ signal: run.abort.signal, onProgress: (p) => this.progress(p) });
      } catch (e) {
        if (e.name !== 'AbortError') failure = e;
      }
      const spent = performance.now() - run.chunkStart;
      run.ended = performance.now();
      run.activeMs += spent;
      if (this.trainedMs !== null) this.trainedMs += spent;
      run.chunkStart = null;
      run.abort = null;
      if (failure) {
        // where the model is, from the run's facts (a diverged run went back to its copy)
        const f = failure.facts, at = f?.step ?? wm.step;
        // a diverged run cannot go on (Train more begins a new one from where the model is)
        this.phase = !f && at > run.startStep ? 'paused' : 'stopped';
        run.reason = 'pause';
        await flush().catch(() => {});
        if (f) this.chart.undo(at); // the steps the model went back over are not its history
        $('stat-step').textContent = fmt.count(at);
        $('stat-loss').textContent = fmt.loss(this.chart.train.at(-1)?.[1]);
        $('stat-val').textContent = fmt.loss(this.chart.val.at(-1)?.[1]);
        $('stat-eta').textContent = '–';
        this.hooks.changed();
        // a divergence is said once, here by the buttons, in words; another failure goes to the errors
        if (f) {
          this.setStatus(fmt.wentWrong(f));
          return;
        }
        this.setStatus(`Training stopped at step ${fmt.count(at)}: an error (below).`);
        throw failure;
      }
      if (this.settings.bpeTokens === null && $('tokenizer-kind').value === 'bpe' && wm.snapshot.tokenizer?.kind === 'bpe') {
        this.settings.setBpeTokens((await wm.encode(this.settings.corpus.text)).length);
      }
      await flush();
    }
    this.phase = this.finished() ? 'done' : 'stopped';
    await flush();
    this.showLoaded(); // its steps and memory now
    this.setStatus(this.phase === 'done'
      ? `Done: ${fmt.count(wm.step)} steps in ${fmt.duration(run.activeMs / 1000)}.`
      : `Stopped at step ${fmt.count(wm.step)}.`);
    $('stat-eta').textContent = '–';
    this.chart.listRuns(); // the run's name with its last steps and time
    this.hooks.changed();
    await this.autosave();
  }

  progress(p) {
    const run = this.run;
    if (run.restarting) {
      // the first report of a call a sample restarted: its start (encoding-free since the
      // handle keeps the text's ids, but a message each way and the step's setup) is the
      // page's time in the call less the worker's time since its first step began
      run.restarting = false;
      this.addSampleCost(performance.now() - run.chunkStart - 1000 * p.elapsed);
    }
    const elapsed = (run.activeMs + (performance.now() - run.chunkStart)) / 1000;
    this.chart.addTrain(p.step, p.loss, run.t0 + elapsed);
    this.hooks.progressed?.();
    if (p.validated && p.valLoss !== null) {
      this.chart.addVal(p.step, p.valLoss, run.t0 + elapsed);
      // a sample from these weights, written between two train calls (checkpoint), unless
      // the samples would pass their share of the training time
      if (!run.reason && this.sampleFits()) {
        this.checkpoint(() => this.sample(p.step, p.valLoss)).catch((e) => this.app.error(fmt.explain(e, 'A sample failed')));
      } else if (!run.reason) {
        this.skipSample(p.step);
      }
    }
    if (run.seconds && p.secondsDone !== undefined) run.secondsDone = p.secondsDone;
    $('stat-step').textContent = run.target && !run.open ? `${fmt.count(p.step)} / ${fmt.count(run.target)}` : fmt.count(p.step);
    $('stat-loss').textContent = fmt.loss(p.loss);
    $('stat-val').textContent = fmt.loss(this.chart.val.at(-1)?.[1]);
    $('stat-speed').textContent = fmt.rate(p.tokensPerSecond);
    $('stat-elapsed').textContent = fmt.duration(elapsed);
    $('stat-eta').textContent = run.open ? '–' : fmt.duration(p.eta);
    $('train-progress').max = run.seconds ?? (run.open ? 1 : run.target - run.startStep);
    $('train-progress').value = run.seconds ? run.secondsDone : run.open ? 0 : p.step - run.startStep;
    if (!run.reason) this.setStatus(this.toGo(p.step), { quiet: true });
    if (p.validated) {
      if (p.valLoss !== null) this.say(`Validation loss ${fmt.loss(p.valLoss)} at ${this.where(p.step)}.`);
      $('overfit-note').hidden = !this.overfitting();
      this.hooks.validated?.();
    }
    if (this.app.autosaveOn() && performance.now() - this.lastSave > AUTOSAVE_MS && !run.reason && !run.saves.length) {
      this.lastSave = performance.now();
      this.checkpoint(() => this.autosave()).catch((e) => this.app.error(fmt.explain(e, 'Autosave failed')));
    }
  }

  pause() {
    if (this.phase !== 'training' || !this.run) return;
    this.run.reason = 'pause';
    this.phase = 'pausing';
    this.setStatus('Pausing after this step…');
    this.hooks.changed();
    this.run.abort?.abort();
  }

  stop() {
    if (this.phase === 'paused') {
      this.phase = 'stopped';
      this.setStatus(`Stopped at step ${fmt.count(this.wm.step)}.`);
      this.hooks.changed();
      return;
    }
    if ((this.phase !== 'training' && this.phase !== 'pausing') || !this.run) return;
    this.run.reason = 'stop';
    this.phase = 'pausing';
    this.setStatus('Stopping after this step…');
    this.hooks.changed();
    this.run.abort?.abort();
  }

  /** Ends training, and whatever else runs on the model, and waits until the worker is idle. */
  async stopAndWait() {
    this.stop();
    await this.hooks.quiet();
    while (this.phase === 'pausing' || this.phase === 'training') await sleep(20);
  }

  /** Runs fn with the model idle: while training, between two train calls. */
  async checkpoint(fn) {
    while (this.phase === 'pausing' || this.phase === 'creating') await sleep(20);
    if (this.phase !== 'training') return fn();
    return new Promise((resolve, reject) => {
      this.run.saves.push(() => fn().then(resolve, reject));
      this.run.abort?.abort();
    });
  }

  /** The status while training. */
  toGo(step) {
    const run = this.run;
    if (run.seconds) return `Training: ${fmt.duration(Math.max(0, run.seconds - run.secondsDone))} to go (step ${fmt.count(step)}).`;
    if (run.open) return `Training until you stop it (step ${fmt.count(step)}).`;
    return `Training: ${fmt.count(run.target - step)} steps to go.`;
  }

  /** The samples' share of the training time: #samples' data-budget (a test sets another). */
  get sampleBudget() {
    const b = Number($('samples').dataset.budget);
    return b >= 0 ? b : 0.03;
  }

  /** A new account of the samples' cost: their total, how many were written and skipped, the
   * costliest one and the newest one's. */
  newSampleBudget() {
    this.samples = { ms: 0, n: 0, skipped: 0, longest: 0, last: 0 };
  }

  /** The run's training time so far (ms): its finished train calls and the one running. */
  runMs() {
    const run = this.run;
    return run ? run.activeMs + (run.chunkStart === null ? 0 : performance.now() - run.chunkStart) : 0;
  }

  /** Whether one more sample (costing what the run's samples cost on average) stays within
   * the budget. The run's first is always written. */
  sampleFits() {
    const c = this.samples;
    return c.n === 0 || c.ms * (c.n + 1) / c.n <= this.sampleBudget * this.runMs();
  }

  /** Adds ms to the newest sample's cost (its writing, then the restart it forced). */
  addSampleCost(ms) {
    const c = this.samples;
    c.ms += Math.max(0, ms);
    c.last += Math.max(0, ms);
    c.longest = Math.max(c.longest, c.last);
    this.showCost();
  }

  /** What the samples cost, in words, and as numbers (ms) for those who check the budget. */
  showCost() {
    const c = this.samples, trained = this.runMs(), line = $('samples-cost');
    if (!(trained > 0) || !c.n) return;
    const budget = `${+(100 * this.sampleBudget).toFixed(2)} %`;
    line.textContent = `Writing these samples took ${(100 * c.ms / trained).toFixed(1)} % of the training time, the restarts they force included`
      + (c.skipped ? `; ${fmt.count(c.skipped)} skipped to keep them near ${budget}.` : '.');
    Object.assign(line.dataset, { spent: c.ms.toFixed(1), trained: trained.toFixed(1), longest: c.longest.toFixed(1), budget: String(this.sampleBudget) });
  }

  /** A validation with no sample: said in the timeline, one line for a stretch of them. */
  skipSample(step) {
    const c = this.samples;
    c.skipped++;
    let li = $('samples').lastElementChild;
    if (!li?.classList.contains('skipped')) {
      li = document.createElement('li');
      li.className = 'skipped';
      li.dataset.from = String(step);
      $('samples').append(li);
    }
    const from = Number(li.dataset.from), n = Number(li.dataset.count ?? 0) + 1;
    li.dataset.count = String(n);
    li.textContent = `${from === step ? `step ${fmt.count(step)}` : `steps ${fmt.count(from)} to ${fmt.count(step)}`}: `
      + `no sample at ${n === 1 ? 'this validation' : `these ${n} validations`}, to keep the samples near `
      + `${+(100 * this.sampleBudget).toFixed(2)} % of the training time`;
    this.showCost();
  }

  /** Writes a sample from the model as it is: "then and now" shows it (thennow.js), and the
   * timeline keeps it, oldest first. */
  async sample(step, valLoss) {
    const t0 = performance.now();
    const text = await this.wm.generateText(SAMPLE_PROMPT, SAMPLE);
    const c = this.samples;
    c.n++;
    c.last = 0;
    if (this.run && this.phase === 'training') this.run.sampled = true; // it forces a restart
    const li = document.createElement('li');
    const at = document.createElement('span');
    at.className = 'at';
    at.textContent = `step ${fmt.count(step)} · validation loss ${fmt.loss(valLoss)}`;
    const pre = document.createElement('pre');
    pre.textContent = text.trim() || '(nothing yet)';
    li.append(at, pre);
    const list = $('samples'), bottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    list.append(li);
    if (bottom) list.scrollTop = list.scrollHeight; // the newest in view, unless the reader scrolled up
    showSample(step, valLoss, pre.textContent);
    this.addSampleCost(performance.now() - t0);
  }

  /** Whether the validation loss has risen past its noise while the training loss falls
   * (judge.js: the noise one validation of this run's settings has, measured); the note says
   * it with the figures, right above the chart. */
  overfitting() {
    const t = this.train?.train ?? {}, c = this.train?.config ?? this.wm?.config ?? {};
    const noise = validationNoise({ evalBatches: t.evalBatches, batchSize: t.batchSize, context: c.context });
    const found = overfitting(this.chart.val, this.chart.train, noise);
    if (found) {
      $('overfit-figures').textContent = `The validation loss is ${fmt.loss(found.now)} over the last three validations, `
        + `${fmt.loss(found.rise)} above its best (${fmt.loss(found.best)}); one validation varies by about ${found.noise.toFixed(3)} by chance.`;
    }
    return !!found;
  }

  /** The model file's bytes, with the loss history in its metadata (a reopened model shows
   * its curve), thinned to at most 2,000 training points. */
  async saveBytes() {
    const c = this.chart.snapshot(), every = Math.ceil(c.train.length / 2000);
    const history = { ...c, train: c.train.filter((_, i) => i % every === 0 || i === c.train.length - 1) };
    const meta = this.wm.metadata;
    await this.wm.setMetadata({ ...(meta && typeof meta === 'object' && !Array.isArray(meta) ? meta : {}), lossHistory: history });
    return this.wm.save();
  }

  /** Forgets what the view says of the model before: its samples, their cost, the
   * overfitting note (a new, opened or restored model has not overfitted yet). */
  clearView() {
    $('samples').replaceChildren();
    clearSamples();
    $('samples-cost').textContent = '';
    $('overfit-note').hidden = true;
    this.newSampleBudget();
  }

  /** The record autosave keeps, bytes included. */
  async record() {
    const bytes = await this.saveBytes();
    const info = this.wm.snapshot;
    const corpus = this.settings.corpus;
    return {
      version: 1, kind: 'lm', savedAt: Date.now(), bytes, step: info.step, paramCount: info.paramCount, modelId: this.modelId,
      trainedMs: this.trainedMs, // its time in training, over all its runs (null: not known)
      // where a step run ends, for the offer to restore it; the run itself is in the model's
      // bytes (its settings, what it has spent), and a reload goes on with it
      target: this.run?.target && !this.run.open && this.wm.step < this.run.target ? this.run.target : null,
      chart: this.chart.snapshot(),
      corpus: { source: corpus.source, name: corpus.name, text: NOVELS[corpus.source] ? null : corpus.text },
      settings: this.settings.values(),
    };
  }

  async autosave() {
    // a model that has not taken a step (or went back to none) is nothing to keep
    if (!this.wm || this.wm.step === 0 || !this.app.autosaveOn()) return;
    this.lastSave = performance.now();
    const record = await this.record();
    await this.app.autosave(record);
  }

  /** Takes a saved record back: the model into a new worker, the chart, the text, the form. */
  async restore(record) {
    await this.stopAndWait();
    const wm = await loadWorkerModel(record.bytes);
    this.wm?.dispose();
    this.wm = wm;
    this.opened = !!wm.snapshot.lora;
    this.pretrained = false; // an autosave continues as it was trained (with its adapters, if any)
    this.from = 'this browser’s autosave';
    this.showFinetune();
    this.modelId = record.modelId ?? newModelId();
    this.trainedMs = Number.isFinite(record.trainedMs) ? record.trainedMs : null;
    this.clearView();
    const settings = this.settings, corpus = settings.corpus;
    settings.restoreValues(record.settings);
    const c = record.corpus ?? {};
    $('corpus-source').value = c.source in NOVELS || c.source === 'paste' || c.source === 'file' ? c.source : 'pride_and_prejudice';
    if (c.text !== null && c.text !== undefined) {
      if (c.source === 'file') {
        corpus.fileText = c.text;
        corpus.fileName = c.name;
      } else {
        corpus.pasted = c.text;
        $('corpus-paste').value = c.text;
      }
    }
    await settings.chooseSource();
    this.train = { ...settings.read(), config: wm.config };
    this.chart.restore(record.chart);
    this.chart.setGuess(Math.log(wm.config.vocabSize));
    this.hooks.model(wm);
    const step = wm.step, r = wm.snapshot.run;
    const paused = { activeMs: 0, reason: 'pause', saves: [], abort: null, chunkStart: null, text: false, t0: this.chart.lastTime(), ...BREAK };
    this.runText = null; // the text restored with it
    this.chart.setRun(this.describe(this.train));
    if (r && !r.finished && !r.diverged) {
      // the model's run, in its file: resume sends the text once and goes on with it exactly
      this.run = { ...paused, target: r.lastSteps ? step - r.steps + r.lastSteps : null, seconds: r.lastSeconds, secondsDone: r.seconds,
        open: r.lastSteps === UNTIL_STOPPED, startStep: step - r.steps };
      this.phase = 'paused';
      this.setStatus(`Restored at ${this.where(step)}: resume training, or generate.`);
    } else if (record.target && record.target > step) {
      // a record of an older page, whose model file holds no run: the steps left, on its schedule
      this.run = { ...paused, target: record.target, seconds: null, secondsDone: 0, open: false, legacy: true, startStep: step };
      this.phase = 'paused';
      this.setStatus(`Restored at step ${fmt.count(step)} of ${fmt.count(record.target)}: resume training, or generate.`);
    } else {
      this.run = null;
      this.phase = 'stopped';
      this.setStatus(`Restored the model trained for ${fmt.count(step)} steps.`);
    }
    $('stat-step').textContent = fmt.count(step);
    $('stat-loss').textContent = fmt.loss(record.chart?.train?.at(-1)?.[1]);
    $('stat-val').textContent = fmt.loss(record.chart?.val?.at(-1)?.[1]);
    this.hooks.changed();
  }

  /** Uses a WorkerModel loaded from a file or a folder: one it can fine-tune. */
  async adopt(wm, fileName) {
    await this.stopAndWait();
    this.wm?.dispose();
    this.wm = wm;
    // what made it, from the core: pretrained elsewhere (fine-tuned with LoRA by default), or
    // a checkpoint (continued as it was trained, LoRA only if it already has adapters)
    this.pretrained = PRETRAINED.has(wm.snapshot.origin);
    this.opened = this.pretrained;
    this.from = fileName;
    this.showFinetune();
    this.modelId = newModelId();
    this.trainedMs = null;
    // the new-model form takes a checkpoint's shape (a new one like it); a pretrained model's is not one to train from scratch
    if (!this.pretrained) this.settings.showModel(wm.config, wm.snapshot.tokenizer);
    // the run's settings of the form (a bad new-model setting does not stop a model opening);
    // Train more reads them again
    let run = null;
    try {
      run = this.settings.readRun();
    } catch { /* the form says what is wrong */ }
    this.train = { train: run?.train ?? {}, tokenizer: run?.tokenizer ?? 'char', config: wm.config };
    this.run = null;
    this.phase = 'stopped';
    this.chart.clear();
    const history = wm.metadata?.lossHistory;
    if (history && Array.isArray(history.train) && Array.isArray(history.val)) this.chart.restore(history);
    this.runText = `the text ${fileName} was trained on`;
    this.chart.setRun(this.describe(this.train));
    this.chart.setGuess(Math.log(wm.config.vocabSize));
    this.clearView();
    this.hooks.model(wm);
    $('stat-step').textContent = fmt.count(wm.step);
    for (const id of ['stat-speed', 'stat-elapsed', 'stat-eta']) $(id).textContent = '–';
    $('stat-loss').textContent = fmt.loss(this.chart.train.at(-1)?.[1]);
    $('stat-val').textContent = fmt.loss(this.chart.val.at(-1)?.[1]);
    this.setStatus(`Opened ${fileName}: ${fmt.count(wm.paramCount)} parameters, ${this.pretrained ? 'pretrained' : `trained for ${fmt.count(wm.step)} steps`}.`);
    this.hooks.changed();
  }
}
