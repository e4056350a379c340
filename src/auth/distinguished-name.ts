/**
 * Distinguished names as RFC 4514 strings (a `tls_client_auth` client's subject DN: docs/auth.md,
 * "Mutual TLS"), compared by meaning: attribute types without regard to case, values without regard
 * to case (as most directories match them) and to spaces around separators, escapes read, the
 * attributes of a multi-valued RDN in any order. Imports nothing: the CLI checks a flag with it.
 */

/** The DN's RDNs, each normalized; undefined when it is not a DN (an RDN without `type=`). */
export function normalizedDistinguishedName(dn: string): string[] | undefined {
  const rdns = splitUnescaped(dn, ',');
  const normalized: string[] = [];
  for (const rdn of rdns) {
    const attributes: string[] = [];
    for (const attribute of splitUnescaped(rdn, '+')) {
      const equals = attribute.indexOf('=');
      if (equals < 1) return undefined;
      const type = attribute.slice(0, equals).trim().toUpperCase();
      if (!/^[A-Z][A-Z0-9-]*$|^[0-9]+(\.[0-9]+)*$/.test(type)) return undefined;
      const value = attributeValue(attribute.slice(equals + 1));
      if (value === undefined) return undefined;
      attributes.push(`${type}=${value.toLowerCase()}`);
    }
    normalized.push(attributes.sort().join('+'));
  }
  return normalized;
}

export function sameDistinguishedName(a: string, b: string): boolean {
  const left = normalizedDistinguishedName(a);
  const right = normalizedDistinguishedName(b);
  return left !== undefined && right !== undefined && left.length === right.length && left.every((rdn, index) => rdn === right[index]);
}

/**
 * A value with its escapes read (RFC 4514 §2.4): `\,` a character, `\C3\A9` the bytes of UTF-8
 * text; the spaces around it dropped, an escaped one kept.
 */
function attributeValue(text: string): string | undefined {
  const bytes: number[] = [];
  let start = 0;
  while (start < text.length && text[start] === ' ') start += 1;
  let end = text.length;
  while (end > start && text[end - 1] === ' ' && !escapedAt(text, end - 1)) end -= 1;
  for (let index = start; index < end; index += 1) {
    const character = text[index] as string;
    if (character !== '\\') {
      bytes.push(...Buffer.from(character, 'utf8'));
      continue;
    }
    const pair = text.slice(index + 1, index + 3);
    if (/^[0-9A-Fa-f]{2}$/.test(pair)) {
      bytes.push(parseInt(pair, 16));
      index += 2;
    } else if (index + 1 < end) {
      bytes.push(...Buffer.from(text[index + 1] as string, 'utf8'));
      index += 1;
    } else {
      return undefined;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Whether the character at `index` is escaped: an odd number of backslashes before it. */
function escapedAt(text: string, index: number): boolean {
  let backslashes = 0;
  for (let before = index - 1; before >= 0 && text[before] === '\\'; before -= 1) backslashes += 1;
  return backslashes % 2 === 1;
}

/** Splits on `separator` where it is not escaped by a backslash. */
function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index] as string;
    if (character === '\\' && index + 1 < text.length) {
      current += character + (text[index + 1] as string);
      index += 1;
    } else if (character === separator) {
      parts.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  parts.push(current);
  return parts;
}
