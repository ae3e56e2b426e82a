import { useEffect, useRef, type ReactNode } from 'react'
import { useI18n } from './i18n.tsx'
import { scrollable } from './ui.tsx'

export interface Series {
  label: string
  values: number[]
  colour: string
}

/**
 * A time-series chart. With `totalLabel`: counts per bucket as stacked bars (uPlot, loaded with the page that
 * shows it): one segment per series, so each bar's height is the bucket's total, said as
 * such in the legend and in its own column of the table; without, lines. The same figures are a table for
 * assistive technology and keyboard users (a canvas says nothing to them). `times` are
 * instants (ms); labels are formatted in the viewer's time zone with Intl.
 */
export function TimeChart({
  title,
  times,
  series,
  totalLabel = null
}: {
  title: string
  times: number[]
  series: Series[]
  totalLabel?: string | null
}): ReactNode {
  // Without `totalLabel`: lines of levels (a balance), not counts to add up.
  const bars = totalLabel !== null
  const { formatDate, formatNumber } = useI18n()
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (!el || times.length === 0) return
    let plot: { destroy: () => void; setSize: (s: { width: number; height: number }) => void } | null = null
    let live = true
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (!live) return
      // Bars: cumulative sums, drawn tallest first (each series paints its own segment over the ones above it).
      const sums = series.map((_, i) =>
        times.map((__, k) => (bars ? series.slice(0, i + 1).reduce((s, x) => s + (x.values[k] ?? 0), 0) : (series[i].values[k] ?? 0)))
      )
      const order = series.map((_, i) => (bars ? series.length - 1 - i : i))
      const paths = bars ? UPlot.paths.bars?.({ size: [0.7, 48] }) : undefined
      plot = new UPlot(
        {
          width: el.clientWidth || 600,
          height: 240,
          series: [
            {},
            ...order.map(i =>
              bars
                ? { label: series[i].label, stroke: series[i].colour, fill: series[i].colour, width: 0, paths, points: { show: false } }
                : { label: series[i].label, stroke: series[i].colour, width: 2 }
            )
          ],
          // The legend is the console's own (below), in a box of fixed height: nothing moves when the data arrives.
          legend: { show: false },
          axes: [{ values: (_u: unknown, ticks: number[]) => ticks.map(v => formatDate(v * 1000, { month: 'short', day: 'numeric' })) }, {}],
          scales: { x: { time: true }, y: { range: (_u: unknown, _min: number, max: number) => [0, Math.max(1, max)] } }
        },
        [times.map(t => t / 1000), ...order.map(i => sums[i])],
        el
      )
    })
    const resize = new ResizeObserver(() => {
      if (plot) plot.setSize({ width: el.clientWidth, height: 240 })
    })
    resize.observe(el)
    return () => {
      live = false
      resize.disconnect()
      plot?.destroy()
    }
  }, [times, series, bars, formatDate])
  return (
    <figure>
      <figcaption className="visually-hidden">{title}</figcaption>
      <div ref={box} className="chart" aria-hidden="true" />
      <ul className="legend" aria-hidden="true">
        {series.map(s => (
          <li key={s.label}>
            <span className="swatch" style={{ background: s.colour }} />
            {s.label}
          </li>
        ))}
        {bars && <li className="muted">{totalLabel}</li>}
      </ul>
      <details>
        <summary>{title}</summary>
        <div className="table-wrap" {...scrollable(title)}>
          <table>
            <thead>
              <tr>
                <th scope="col">{title}</th>
                {series.map(s => (
                  <th scope="col" key={s.label}>
                    {s.label}
                  </th>
                ))}
                {bars && <th scope="col">{totalLabel}</th>}
              </tr>
            </thead>
            <tbody>
              {times.map((t, k) => (
                <tr key={t}>
                  <td>{formatDate(t, { dateStyle: 'medium', timeStyle: 'short' })}</td>
                  {series.map(s => (
                    <td key={s.label}>{formatNumber(s.values[k] ?? 0)}</td>
                  ))}
                  {bars && (
                    <td>
                      <strong>{formatNumber(series.reduce((sum, s) => sum + (s.values[k] ?? 0), 0))}</strong>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}
