import t from 'tap'
import { parseAddress } from '../../src/verifier/syntax.ts'

// Cases written from RFC 5321 §4.1.2 / §4.5.3.1, RFC 5322 §3.2.3 / §3.4.1, RFC 6531 and
// RFC 5890 (IDNA), plus the public-suffix rule of docs/design/verification.md.
const valid: Array<[string, string, string]> = [
  ['jane@example.com', 'jane@example.com', 'plain dot-atom'],
  ['Jane.Doe@Example.COM', 'Jane.Doe@example.com', 'domain lower-cased, local part kept'],
  ["o'brien+tag@example.co.uk", "o'brien+tag@example.co.uk", 'apostrophe and plus are atext'],
  ["!#$%&'*+-/=?^_`{|}~@example.org", "!#$%&'*+-/=?^_`{|}~@example.org", 'every atext special'],
  ['"john doe"@example.com', '"john doe"@example.com', 'quoted string with space (qtextSMTP)'],
  ['"a\\"b"@example.com', '"a\\"b"@example.com', 'quoted-pair inside quotes'],
  ['"a@b"@example.com', '"a@b"@example.com', '@ inside a quoted local part'],
  ['用户@例子.中国', '用户@xn--fsqu00a.xn--fiqs8s', 'EAI local part (RFC 6531) and IDN domain'],
  ['jane@bücher.de', 'jane@xn--bcher-kva.de', 'U-label domain to A-label'],
  ['jane@xn--bcher-kva.de', 'jane@xn--bcher-kva.de', 'A-label kept'],
  ['a@b.co', 'a@b.co', 'shortest sensible address'],
  [`${'a'.repeat(64)}@example.com`, `${'a'.repeat(64)}@example.com`, 'local part of exactly 64 octets'],
  ['jane@sub.domain.example.com', 'jane@sub.domain.example.com', 'subdomains'],
  ['jane@my-site.example.com', 'jane@my-site.example.com', 'hyphen inside a label (RFC 1035 §2.3.1 LDH)']
]

const invalid: Array<[string, RegExp, string]> = [
  ['jane@my-site.example', /special-use/, '.example is reserved (RFC 2606, RFC 6761 §6.5): no mail can be delivered there'],
  ['jane@printer.local', /special-use/, '.local is multicast DNS only (RFC 6762 §3)'],
  ['', /empty/, 'empty'],
  ['janeexample.com', /missing @/, 'no @'],
  ['@example.com', /empty local/, 'empty local part'],
  ['jane@', /empty domain/, 'empty domain'],
  ['.jane@example.com', /dot/, 'leading dot (RFC 5321 Dot-string)'],
  ['jane.@example.com', /dot/, 'trailing dot'],
  ['ja..ne@example.com', /dot/, 'double dot'],
  ['ja ne@example.com', /invalid character/, 'unquoted space'],
  ['ja(ne)@example.com', /invalid character/, 'parentheses are not atext'],
  ['a@b@example.com', /invalid character|unquoted @/, 'unquoted @'],
  ['"unterminated@example.com', /quoted/, 'unterminated quote'],
  ['"a"b"@example.com', /quoted|invalid/, 'bare quote inside quotes'],
  [`${'a'.repeat(65)}@example.com`, /64 octets/, 'local part over 64 octets'],
  [`${'é'.repeat(33)}@example.com`, /64 octets/, 'UTF-8 local part over 64 octets (66 bytes)'],
  [`a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(57)}.com`, /254 octets|253/, 'address over 254 octets'],
  ['jane@[192.0.2.1]', /address literal/, 'address literals cannot be verified'],
  ['jane@localhost', /fully qualified/, 'single-label domain'],
  ['jane@example', /fully qualified/, 'no TLD'],
  ['jane@-example.com', /label/, 'label starting with a hyphen'],
  ['jane@example-.com', /label/, 'label ending with a hyphen'],
  ['jane@exa_mple.com', /label|invalid character/, 'underscore in a host name'],
  ['jane@example.com.', /trailing dot/, 'trailing root dot (not in the RFC 5321 Domain grammar)'],
  ['jane@anything.arpa', /special-use/, 'special-use domain (RFC 6761)'],
  ['jane@hidden.onion', /special-use/, '.onion (RFC 7686)'],
  ['""@example.com', /empty quoted/, 'empty quoted local part'],
  ['me\u00A0x@example.com', /space/, 'no-break space in an unquoted local part'],
  ['me.\u037E@example.com', /invalid character/, 'Greek question mark is ";" in NFC (RFC 6532 §3.1)'],
  ['\u226Eme@example.com', /invalid character/, '"≮" decomposes to "<"'],
  ['test@example.com/path', /invalid character/, 'URL path after the domain'],
  [`jane@${'a'.repeat(64)}.com`, /label/, 'label over 63 octets'],
  ['jane@example.123', /numeric|IDNA/, 'numeric TLD'],
  ['jane@192.168.0.1', /numeric|IP/, 'IP address instead of a domain'],
  ['jane@example.notarealtld', /public suffix/, 'unknown TLD'],
  ['jane@co.uk', /public suffix itself/, 'a public suffix is not a registrable domain'],
  ['jane@exa mple.com', /invalid character/, 'space in domain'],
  ['jane@example.com\r\nBcc: x@y.com', /control/, 'header injection']
]

for (const [input, normalized, why] of valid) {
  t.test(`valid: ${why}`, async t => {
    const r = parseAddress(input)
    t.ok(r.ok, JSON.stringify(r))
    if (r.ok) t.equal(r.normalized, normalized)
  })
}

for (const [input, detail, why] of invalid) {
  t.test(`invalid: ${why}`, async t => {
    const r = parseAddress(input)
    t.equal(r.ok, false)
    if (!r.ok) t.match(r.detail, detail)
  })
}

t.test('EAI and quoted flags', async t => {
  const eai = parseAddress('用户@example.com')
  t.ok(eai.ok && eai.eai)
  const q = parseAddress('"x y"@example.com')
  t.ok(q.ok && q.quoted)
})
