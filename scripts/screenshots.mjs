#!/usr/bin/env node
// The page's pictures of its model section and training bar (issue 27) at the three sizes the
// issue names: wide 1280x800, laptop 1024x768, phone 390x844. Each: the page built and served
// as the tests serve it (cross-origin isolated), a fresh profile, Train pressed with every
// default ('auto' size, 1 minute), stopped after `--seconds` (default 12), then a picture of
// the first screen, and one of the model section. Writes docs/screenshots/page-open-{wide,
// laptop,phone}.png and page-open-*-model.png (--out dir).
//   node scripts/screenshots.mjs [--out docs/screenshots] [--seconds 12]
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, root, serveSite, waitText } from '../tests/web/harness.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const out = resolve(arg('--out', join(root, 'docs/screenshots')));
const seconds = Number(arg('--seconds', 12));
const SIZES = { wide: { width: 1280, height: 800 }, laptop: { width: 1024, height: 768 }, phone: { width: 390, height: 844 } };

mkdirSync(out, { recursive: true });
const site = await serveSite();
try {
  for (const [name, viewport] of Object.entries(SIZES)) {
    const b = await open(site.origin, viewport);
    try {
      await b.page.click('#train-start');
      await waitText(b.page, '#train-status', /^Training: /);
      await b.page.waitForTimeout(1000 * seconds);
      await b.page.click('#train-stop');
      await waitText(b.page, '#train-status', /^Stopped at step/, 60_000);
      await b.page.evaluate(() => window.scrollTo(0, 0));
      const file = join(out, `page-open-${name}.png`);
      await b.page.screenshot({ path: file });
      // and the model section: the model loaded, opening one, a new model's form with auto's line
      const section = await b.page.$('section:has(#model-title)');
      await section.screenshot({ path: join(out, `page-open-${name}-model.png`) });
      console.log(`${file} (and -model): ${viewport.width}x${viewport.height}, ${await b.page.$eval('#train-status', (el) => el.textContent)}`);
      if (b.problems.length) console.error(b.problems.join('\n'));
    } finally {
      await b.close();
    }
  }
} finally {
  await site.close();
}
