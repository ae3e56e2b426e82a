import { deflateRawSync, crc32 } from 'node:zlib'

/** A part of a zip: its name and bytes (deflated unless `stored`); `claim` overrides the uncompressed size the headers declare. */
export interface ZipPart {
  name: string
  data: Buffer
  stored?: boolean
  claim?: number
}

/**
 * A zip archive (APPNOTE.TXT 6.3: local headers, data, central directory, end record),
 * written by hand so that a test can make what no archiver would: parts in any order, a
 * part that inflates a thousandfold, a size that lies.
 */
export function zip(parts: readonly ZipPart[]): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const p of parts) {
    const name = Buffer.from(p.name, 'utf8')
    const body = p.stored ? p.data : deflateRawSync(p.data, { level: 1 })
    const crc = crc32(p.data)
    const size = p.claim ?? p.data.length
    // The fields the local header (APPNOTE 4.3.7) and the central one (4.3.12) share, at their own offsets.
    const common = (header: Buffer, at: number): void => {
      header.writeUInt16LE(0x0800, at) // flags: UTF-8 names
      header.writeUInt16LE(p.stored ? 0 : 8, at + 2)
      header.writeUInt32LE(crc, at + 8)
      header.writeUInt32LE(body.length, at + 12)
      header.writeUInt32LE(size, at + 16)
      header.writeUInt16LE(name.length, at + 20)
    }
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    common(local, 6)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    common(central, 8)
    central.writeUInt32LE(offset, 42)
    locals.push(local, name, body)
    centrals.push(central, name)
    offset += local.length + name.length + body.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(parts.length, 8)
  end.writeUInt16LE(parts.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'

/**
 * The parts of a minimal workbook (ECMA-376 Part 1) with one sheet, `sheet` its
 * `<sheetData>` content and `strings` its shared strings' `<sst>` content (none when
 * null), the worksheet before the shared strings in the archive, as Excel orders them.
 */
export function workbookParts(sheet: string | Buffer, strings: string | Buffer | null): ZipPart[] {
  const text = (s: string | Buffer): Buffer => (typeof s === 'string' ? Buffer.from(s) : s)
  return [
    {
      name: '[Content_Types].xml',
      data: Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
      )
    },
    {
      name: '_rels/.rels',
      data: Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`
      )
    },
    {
      name: 'xl/workbook.xml',
      data: Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><workbook ${NS} xmlns:r="${REL}"><sheets><sheet name="List" sheetId="1" r:id="rId1"/></sheets></workbook>`
      )
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`
      )
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: Buffer.concat([
        Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><worksheet ${NS}><sheetData>`),
        text(sheet),
        Buffer.from('</sheetData></worksheet>')
      ])
    },
    ...(strings === null
      ? []
      : [
          {
            name: 'xl/sharedStrings.xml',
            data: Buffer.concat([Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><sst ${NS}>`), text(strings), Buffer.from('</sst>')])
          }
        ])
  ]
}
