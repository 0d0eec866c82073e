/**
 * Palette drag and drop, after React Flow's drag-and-drop example: a provider holding the type
 * being dragged (also put on the DataTransfer, so any drag source works), and the canvas element
 * so a click on a palette item can add at the centre of the view.
 */
import { createContext, useContext, useMemo, useRef, useState, type ReactNode, type RefObject } from 'react';

/** The DataTransfer type a palette item carries (its value: the node type). */
export const DND_MIME = 'application/x-runnel-node';

interface DnDValue {
  /** The node type being dragged from the palette, if any. */
  type: string | undefined;
  setType(type: string | undefined): void;
  /** The canvas's element (for its centre). */
  canvasRef: RefObject<HTMLDivElement | null>;
}

const DnDContext = createContext<DnDValue | null>(null);

/** Holds the palette's drag state for the palette and the canvas below it. */
export function DnDProvider({ children }: { children: ReactNode }) {
  const [type, setType] = useState<string | undefined>(undefined);
  const canvasRef = useRef<HTMLDivElement | null>(null);
  const value = useMemo(() => ({ type, setType, canvasRef }), [type]);
  return <DnDContext.Provider value={value}>{children}</DnDContext.Provider>;
}

/** The palette's drag state; throws outside a {@link DnDProvider} (a wiring bug). */
export function useDnD(): DnDValue {
  const value = useContext(DnDContext);
  if (!value) throw new Error('useDnD must be used within a DnDProvider');
  return value;
}
