/**
 * Every rule of the kit, in the order it runs them (docs/conformance.md, "The rules"): end of day
 * comes last but one, since it moves the business date the others book on, and the events after it,
 * since end of day writes them.
 */
import { businessDayRules } from './business-day-rules.js';
import type { ConformanceRule } from './conformance-rule.js';
import { moneyAndDateRules } from './money-and-date-rules.js';
import { operationRules } from './operation-rules.js';
import { recordsRules } from './records-rules.js';
import { refusalRules } from './refusal-rules.js';
import { wireRules } from './wire-rules.js';

const byId = (rules: readonly ConformanceRule[], id: string): ConformanceRule => {
  const rule = rules.find((candidate) => candidate.id === id);
  if (!rule) throw new Error(`no conformance rule ${id}`);
  return rule;
};

export const conformanceRules: readonly ConformanceRule[] = [
  byId(businessDayRules, 'business-date'),
  ...operationRules,
  ...refusalRules,
  ...wireRules,
  ...moneyAndDateRules,
  ...recordsRules,
  byId(businessDayRules, 'end-of-day'),
  byId(businessDayRules, 'events'),
];

export const conformanceRuleIds: readonly string[] = conformanceRules.map((rule) => rule.id);
