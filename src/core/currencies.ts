/**
 * Active ISO 4217 currency codes and their minor units (the exponent). Codes without minor units
 * (precious metals XAU..., XDR, XTS, XXX) and withdrawn codes (HRK, ANG, BGN, SLL, ZWL, CUC) are
 * not currencies an account can hold, so they are refused.
 */
const exponentZero = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF';
const exponentThree = 'BHD IQD JOD KWD LYD OMR TND';
const exponentFour = 'CLF UYW';
const exponentTwo =
  'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW ' +
  'CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF ' +
  'IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK ' +
  'MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP ' +
  'SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ' +
  'ZAR ZMW ZWG';

const exponents = new Map<string, number>();
for (const [codes, exponent] of [
  [exponentZero, 0],
  [exponentTwo, 2],
  [exponentThree, 3],
  [exponentFour, 4],
] as const) {
  for (const code of codes.split(' ')) exponents.set(code, exponent);
}

/** The number of minor-unit digits of an active ISO 4217 code, or undefined for any other string. */
export function currencyExponent(code: string): number | undefined {
  return exponents.get(code);
}

export function isActiveCurrency(code: string): boolean {
  return exponents.has(code);
}
