// htm bound to Preact: tagged templates instead of JSX, so the console needs no build step.
import { h, render } from './vendor/preact.js';
import htm from './vendor/htm.js';

export const html = htm.bind(h);
export { render };
