import { useState } from 'react'

type Line = { sku: string; quantity: number }

export function Cart({ initial }: { initial: Line[] }) {
  const [lines, setLines] = useState(initial)
  const total = lines.reduce((sum, line) => sum + line.quantity, 0)
  return (
    <ul>
      {lines.map((line) => (
        <li key={line.sku}>
          {line.sku}: {line.quantity}
        </li>
      ))}
      <li>{total} items</li>
      <button onClick={() => setLines([])}>Empty</button>
    </ul>
  )
}
