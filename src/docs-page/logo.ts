/**
 * coregate's wordmark for the API docs page (/docs), in place of the framework's logo. An SVG in
 * a string so that the build (tsc) ships it with the code and the process serves it itself.
 */
export const coregateLogoSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40" role="img" aria-label="coregate API">
  <title>coregate API</title>
  <rect x="2" y="6" width="28" height="28" rx="6" fill="#0f766e"/>
  <path d="M22 14.5a8 8 0 1 0 0 11" fill="none" stroke="#ffffff" stroke-width="3.5" stroke-linecap="round"/>
  <text x="40" y="28" font-family="Helvetica, Arial, sans-serif" font-size="22" font-weight="700" fill="#ffffff">coregate</text>
  <text x="140" y="28" font-family="Helvetica, Arial, sans-serif" font-size="22" font-weight="400" fill="#99f6e4">API</text>
</svg>
`;

/** The wordmark's square "c" alone, as the docs page's favicon (instead of the framework's). */
export const coregateIconSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">
  <rect x="2" y="2" width="28" height="28" rx="6" fill="#0f766e"/>
  <path d="M22 10.5a8 8 0 1 0 0 11" fill="none" stroke="#ffffff" stroke-width="3.5" stroke-linecap="round"/>
</svg>
`;
