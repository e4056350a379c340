// Charts drawn with uPlot: an account's balance over time, operations per minute by outcome.
// The numbers are for drawing only; every amount the page prints comes from the exact strings.
import { html } from './html.js';
import { useEffect, useRef } from './vendor/hooks.js';
import uPlot from './vendor/uplot.js';

const outcomeColours = { Executed: '#2f855a', Rejected: '#c53030', Pending: '#b7791f', Unknown: '#6b46c1', Refused: '#718096' };

/** A uPlot chart that follows its data: created once, updated in place, destroyed on unmount. */
function Chart({ options, data, label }) {
  const holder = useRef(null);
  const plot = useRef(null);
  useEffect(() => {
    const width = Math.max(320, holder.current.clientWidth || 640);
    plot.current = new uPlot({ width, height: 220, ...options }, data, holder.current);
    return () => plot.current?.destroy();
  }, [JSON.stringify(options.series.map((series) => series.label))]);
  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);
  return html`<div class="chart" ref=${holder} role="img" aria-label=${label}></div>`;
}

/** Points { at, balance: { amount, currency } }, oldest first. */
export function BalanceChart({ history }) {
  if (!history || history.points.length === 0) return html`<p class="hint">No postings yet: nothing to draw.</p>`;
  // The balance holds from the last posting until now: the line runs to the right edge.
  const xs = [...history.points.map((point) => Date.parse(point.at) / 1000), Date.now() / 1000];
  const ys = history.points.map((point) => Number(point.balance.amount));
  ys.push(ys[ys.length - 1]);
  const options = {
    series: [{}, { label: `Balance (${history.currency})`, stroke: '#2b6cb0', width: 2, fill: 'rgba(43,108,176,0.08)', paths: uPlot.paths.stepped({ align: 1 }) }],
    axes: [{}, { size: 80 }],
    legend: { show: true },
  };
  return html`<${Chart} options=${options} data=${[xs, ys]} label="Balance over time" />`;
}

/**
 * { minutes: ISO[], series: { outcome: counts[] } } as stacked bars: series k is drawn as the sum
 * of the outcomes up to k, the tallest first, so each outcome shows as its own band; the legend
 * shows each outcome's own count.
 */
export function OperationsPerMinuteChart({ perMinute }) {
  if (!perMinute) return null;
  const outcomes = Object.keys(perMinute.series);
  const xs = perMinute.minutes.map((minute) => Date.parse(minute) / 1000);
  const stacked = [];
  outcomes.forEach((outcome, index) => stacked.push(perMinute.series[outcome].map((count, minute) => count + (index === 0 ? 0 : stacked[index - 1][minute]))));
  const order = outcomes.map((_, index) => index).reverse();
  const bars = uPlot.paths.bars({ size: [0.8, 24] });
  const options = {
    series: [
      {},
      ...order.map((index) => ({
        label: outcomes[index],
        stroke: outcomeColours[outcomes[index]] ?? '#333',
        fill: outcomeColours[outcomes[index]] ?? '#333',
        width: 0,
        paths: bars,
        points: { show: false },
        value: (_plot, _value, _series, minute) => (minute === null ? '--' : String(perMinute.series[outcomes[index]][minute])),
      })),
    ],
    axes: [{}, { size: 50 }],
    scales: { y: { range: (_plot, _min, max) => [0, Math.max(4, max + 1)] } },
  };
  return html`<${Chart} options=${options} data=${[xs, ...order.map((index) => stacked[index])]} label="Operations per minute by outcome" />`;
}
