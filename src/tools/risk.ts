// The risk rule for a call the model rated: under the `risky` confirmation policy, a call rated
// HIGH, or not rated at all, asks the user first. Pure: the built-in tools (their needsApproval) and
// the workflow (a call with no rule of its own) both use it.

/** The ratings the model gives a terminal or file_editor call in its `security_risk` argument. */
export type SecurityRisk = 'LOW' | 'MEDIUM' | 'HIGH';

/** Whether a call with these arguments asks first under `risky`: only LOW and MEDIUM go ahead. */
export function riskyUnlessRatedLow(args: unknown): boolean {
  const risk = (args as { security_risk?: unknown } | null | undefined)?.security_risk;
  return !(risk === 'LOW' || risk === 'MEDIUM');
}
