// The language-model half of the page, put together: the settings form (settings.js), the
// training controller (trainer.js), the generation panel (generation.js) and the attention
// panel (attention.js) over one model, and which of their buttons can be used when.
import { SettingsForm } from './settings.js';
import { TrainingController } from './trainer.js';
import { GenerationPanel } from './generation.js';
import { AttentionPanel } from './attention.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);

export class LanguageModelUI {
  /** app: {error(text), autosave(record) -> Promise, autosaveOn(), keepChanged(), threads(n), newRun()} */
  constructor(app) {
    this.app = app;
    const changed = () => this.refresh();
    this.settings = new SettingsForm(app, changed);
    this.training = new TrainingController(app, this.settings, {
      changed,
      model: (wm) => {
        app.threads(wm.snapshot.threads ?? 1, wm.snapshot.simd);
        this.attention.setModel(wm.config);
        this.attentionTried = false;
        this.generation.forget();
      },
      quiet: () => this.generation.stop(),
      // the map is drawn at the first report of a new model's training (its tokenizer exists
      // from the first step), and again at each validation when live
      progressed: () => {
        if (this.attention.maps || this.attentionTried) return;
        this.attentionTried = true; // once a model: each try pauses training for a moment
        this.drawAttention();
      },
      validated: () => { if ($('att-live').checked || !this.attention.maps) this.drawAttention(); },
    });
    this.generation = new GenerationPanel(() => this.training.wm, changed);
    this.attention = new AttentionPanel(() => this.training.wm, (fn) => this.training.checkpoint(fn), () => this.settings.corpus.text);
    this.wire();
    this.refresh();
  }

  wire() {
    const t = this.training, act = (doing, fn) => () => fmt.guard(this.app, doing, fn, () => this.refresh());
    $('train-start').addEventListener('click', act('Training', () => t.startNew()));
    $('train-pause').addEventListener('click', () => (t.phase === 'paused' ? act('Could not resume', () => t.resume())() : t.pause()));
    $('train-stop').addEventListener('click', () => t.stop());
    $('train-more').addEventListener('click', act('Training', () => t.trainMore()));
    $('gen-start').addEventListener('click', act('Generation failed', () => this.generation.generate()));
    $('gen-stop').addEventListener('click', () => this.generation.abort?.abort());
    $('att-show').addEventListener('click', act('Could not compute the attention map', () => this.attention.show()));
    $('att-text').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !$('att-show').disabled) $('att-show').click(); });
    for (const id of ['tr-for', 'tr-steps']) $(id).addEventListener('input', () => this.refresh());
  }

  // what app.js uses: the model, whether it is busy, saving and replacing it

  get wm() { return this.training.wm; }
  get phase() { return this.training.phase; }
  get busyGenerating() { return this.generation.busy; }
  held() { return this.training.held(); }
  chooseSource() { return this.settings.chooseSource(); }
  checkpoint(fn) { return this.training.checkpoint(fn); }
  async restore(record) {
    await this.training.restore(record);
    await this.showAttention();
  }

  async adopt(wm, fileName) {
    await this.training.adopt(wm, fileName);
    await this.showAttention();
  }

  /** The attention map of the panel's text, drawn as soon as a model can give one. */
  async showAttention() {
    if (!this.training.wm?.snapshot?.tokenizer) return;
    await this.attention.show().catch((e) => this.app.error(fmt.explain(e, 'Could not compute the attention map')));
  }

  /** While training: the map from the weights as they are, between two train calls. One at a
   * time: asked while one is being drawn, it is drawn again once that one is done (from the
   * newer weights), so a live map misses no validation. */
  drawAttention() {
    if (this.attention.busy) {
      this.attentionAgain = true;
      return;
    }
    this.attentionAgain = false;
    this.attention.show({ whenReady: true })
      .catch((e) => this.app.error(fmt.explain(e, 'Could not compute the attention map')))
      .finally(() => { if (this.attentionAgain) this.drawAttention(); });
  }

  /** Enables the buttons that can be used now. */
  refresh() {
    const t = this.training, p = t.phase, has = !!t.wm, gen = this.generation.busy, problem = !!this.settings.problem;
    $('train-start').disabled = t.running || gen || problem;
    $('train-pause').disabled = !(p === 'training' || p === 'paused') || gen;
    $('train-pause').textContent = p === 'paused' ? 'Resume' : 'Pause';
    $('train-stop').disabled = !(p === 'training' || p === 'paused');
    // the loaded model trains more whatever the new-model form says: only the text and the run's settings count
    $('train-more').disabled = !has || t.running || p === 'paused' || gen || !!this.settings.runProblem;
    const ready = has && !t.running && t.wm.snapshot?.tokenizer;
    $('gen-start').disabled = !ready || gen;
    $('gen-stop').disabled = !gen;
    $('att-show').disabled = !ready || gen;
    if (!gen) this.generation.idle(!!ready, has);
    // Train more: what it does in the form's terms ("Train this model 1 minute more")
    const length = $('tr-for').value, n = Number($('tr-steps').value);
    $('train-more').textContent = length === 'until' ? 'Train this model more, until I stop it'
      : length !== 'steps' ? `Train this model ${$('tr-for').selectedOptions[0].textContent} more`
        : Number.isInteger(n) && n > 0 ? `Train this model ${fmt.count(n)} more steps` : 'Train this model more steps';
    this.app.keepChanged();
  }
}
