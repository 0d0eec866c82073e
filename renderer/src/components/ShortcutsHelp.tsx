/**
 * The keyboard-shortcut help: `?` anywhere outside a text field (and with no other dialog open)
 * opens it, Escape or the backdrop closes it. What it lists is what the views handle (Designer.tsx,
 * InstanceTable.tsx, the dialogs).
 *
 * Test ids: `shortcuts-dialog`, `shortcuts-close`.
 */
import { useEffect, useRef, useState } from 'react';

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/u.test(navigator.platform);
const MOD = isMac ? '⌘' : 'Ctrl';

/** Each group's shortcuts: keys (pressed together; `/` between alternatives) and what they do. */
const GROUPS: ReadonlyArray<{ title: string; items: ReadonlyArray<[keys: string, what: string]> }> = [
  {
    title: 'Anywhere',
    items: [
      ['?', 'Show this help'],
      ['Esc', 'Close a dialog'],
    ],
  },
  {
    title: 'Designer',
    items: [
      [`${MOD}+S`, 'Save (a new workflow asks for its name first)'],
      [`${MOD}+Z`, 'Undo'],
      [`${MOD}+Shift+Z / ${MOD}+Y`, 'Redo'],
      [`${MOD}+C / ${MOD}+V`, 'Copy / paste the selection'],
      [`${MOD}+D`, 'Duplicate the selection'],
      [`${MOD}+A`, 'Select every node'],
      ['Delete / Backspace', 'Delete the selection'],
      ['Shift+drag', 'Select with a box'],
      [`${isMac ? '⌘' : 'Ctrl'}+click`, 'Add to the selection'],
    ],
  },
  {
    title: 'Instances',
    items: [
      ['Tab', 'Move between rows'],
      ['Enter', 'Open the focused instance'],
    ],
  },
];

/** Whether a key typed into `target` is text for it (then `?` is a character, not a command). */
function typesText(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  return target instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit', 'range', 'color', 'file'].includes(target.type);
}

/** The `?` listener and its dialog. */
export function ShortcutsHelp() {
  const [open, setOpen] = useState(false);
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape' && open) {
        e.preventDefault();
        setOpen(false);
        return;
      }
      if (e.key !== '?' || e.ctrlKey || e.metaKey || e.altKey || typesText(e.target)) return;
      // Another dialog has the keyboard.
      if (!open && document.querySelector('[role="dialog"][aria-modal="true"]')) return;
      e.preventDefault();
      setOpen((o) => !o);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);
  useEffect(() => {
    if (open) closeRef.current?.focus();
  }, [open]);
  if (!open) return null;
  return (
    <div className="shortcuts-backdrop" onMouseDown={(e) => e.target === e.currentTarget && setOpen(false)}>
      <div className="shortcuts-dialog" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title" data-testid="shortcuts-dialog">
        <header>
          <h2 id="shortcuts-title">Keyboard shortcuts</h2>
          <button type="button" ref={closeRef} data-testid="shortcuts-close" aria-label="Close" onClick={() => setOpen(false)}>
            ×
          </button>
        </header>
        {GROUPS.map((g) => (
          <section key={g.title}>
            <h3>{g.title}</h3>
            <dl>
              {g.items.map(([keys, what]) => (
                <div key={keys} className="shortcut">
                  <dt>
                    {keys.split(' / ').map((alt, i) => (
                      <span key={alt}>
                        {i > 0 ? ' or ' : null}
                        {alt.split('+').map((k, j) => (
                          <span key={`${k}${j}`}>
                            {j > 0 ? '+' : null}
                            <kbd>{k}</kbd>
                          </span>
                        ))}
                      </span>
                    ))}
                  </dt>
                  <dd>{what}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
      </div>
    </div>
  );
}
