/**
 * The longest value each kind of string field takes, in characters (UTF-16 code units, as JSON
 * Schema's maxLength counts them), and the identifiers' alphabet (docs/api.md, "Order of checks";
 * docs/security.md). Every request string has one of these limits, so no field can carry an
 * unbounded payload into the core, the audit trail or a log line.
 */

/** Account numbers, facility ids, contract numbers, operation references. */
export const identifierCharsMax = 64;
/** Customer references, product and component codes. */
export const referenceCharsMax = 128;
/** Free text: a movement's description, an account's description. */
export const descriptionCharsMax = 256;
/** Enumerated words (accountType, dateType, loan types): longer than any accepted value. */
export const wordCharsMax = 64;
/** Currency codes: ISO 4217 codes are 3 letters; longer text is refused with a clear message. */
export const currencyCodeCharsMax = 16;

/** Identifiers never hold control characters (C0, DEL, C1): they reach logs, records and the core. */
export const identifierPattern = '^[^\\u0000-\\u001F\\u007F-\\u009F]*$';

/** Free text may hold tabs and line breaks but no other control character (a NUL breaks PostgreSQL text). */
export const freeTextPattern = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$';
