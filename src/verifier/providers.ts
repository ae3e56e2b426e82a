/**
 * Mailbox providers recognised from MX host names. Used to label `mx.provider` and to
 * group politeness limits per provider.
 */
const PROVIDERS: ReadonlyArray<[string, RegExp]> = [
  ['google', /(^|\.)(google|googlemail)\.com$/],
  ['microsoft', /(^|\.)(outlook\.com|protection\.outlook\.com|hotmail\.com|olc\.protection\.outlook\.com)$/],
  ['yahoo', /(^|\.)(yahoodns\.net|yahoo\.com)$/],
  ['apple', /(^|\.)(icloud\.com|me\.com|apple\.com)$/],
  ['zoho', /(^|\.)zoho\.(com|eu|in)$/],
  ['mimecast', /(^|\.)mimecast\.(com|co\.za)$/],
  ['proofpoint', /(^|\.)(pphosted\.com|ppe-hosted\.com)$/],
  ['barracuda', /(^|\.)barracudanetworks\.com$/],
  ['yandex', /(^|\.)yandex\.(net|ru)$/],
  ['mailru', /(^|\.)mail\.ru$/],
  ['gmx', /(^|\.)(gmx\.net|web\.de)$/],
  ['fastmail', /(^|\.)messagingengine\.com$/],
  ['protonmail', /(^|\.)protonmail\.ch$/]
]

/** Provider name for an MX host, or null when not recognised. */
export function providerOf(mxHost: string): string | null {
  const h = mxHost.toLowerCase().replace(/\.$/, '')
  for (const [name, re] of PROVIDERS) if (re.test(h)) return name
  return null
}
