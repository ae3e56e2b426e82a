import type { ReactNode } from 'react'
import { Label, ListBox, ListBoxItem, Popover, Select, SelectValue, Button } from 'react-aria-components'

/** A choice among labelled options (React Aria's Select: a button, a list box in a popover, keyboard and screen-reader ready). */
export function Choice<T extends string>({
  label,
  value,
  options,
  onChange
}: {
  label: string
  value: T
  options: Array<[T, string]>
  onChange: (v: T) => void
}): ReactNode {
  return (
    <Select
      selectedKey={value}
      onSelectionChange={k => {
        onChange(k as T)
      }}
    >
      <Label>{label}</Label>
      <Button>
        <SelectValue />
        <span aria-hidden="true">▾</span>
      </Button>
      <Popover>
        <ListBox>
          {options.map(([k, text]) => (
            <ListBoxItem key={k} id={k}>
              {text}
            </ListBoxItem>
          ))}
        </ListBox>
      </Popover>
    </Select>
  )
}
