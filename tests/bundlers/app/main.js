import { report, run } from './app.js';

report(run());
