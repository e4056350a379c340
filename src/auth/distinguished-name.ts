/**
 * Distinguished names as RFC 4514 strings (a `tls_client_auth` client's subject DN, CONTRACT §13),
 * compared by meaning: attribute types without regard to case, values without regard to case (as
 * most directories match them) and to spaces around separators, escapes read, the attributes of a
 * multi-valued RDN in any order. Imports nothing: the CLI checks a flag with it.
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
      const value = attribute
        .slice(equals + 1)
        .trim()
        .replace(/\\([0-9A-Fa-f]{2}|.)/g, (_escape, escaped: string) => (escaped.length === 2 ? String.fromCharCode(parseInt(escaped, 16)) : escaped))
        .toLowerCase();
      attributes.push(`${type}=${value}`);
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
