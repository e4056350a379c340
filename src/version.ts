/** coregate's version, as package.json says (test/cli/version.test.ts keeps the two equal). */
export const version = '0.1.0';
