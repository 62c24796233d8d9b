/**
 * The property an audience (or computed trait) is delivered as: the snake_case of its name
 * (docs/decisions/0010-audiences-and-computed-traits.md). Rules, in order:
 *
 * 1. Compatibility decomposition (NFKD): full-width `ＡＢＣ` → `ABC`, `ﬁ` → `fi`, `①` → `1`.
 * 2. Accents on Latin letters are dropped (`é` → `e`, `ü` → `u`, Turkish `İ` → `I`); marks on other
 *    scripts stay, because they are part of the letter (`ザ` is `サ` + a voicing mark). Emoji
 *    variation selectors and enclosing marks (keycaps) go.
 * 3. camelCase boundaries become word breaks: a lower-case letter or digit before an upper-case
 *    one (`frequentBuyers` → `frequent_Buyers`), and the last capital of a run before a capital
 *    word (`HTMLParser` → `HTML_Parser`).
 * 4. Lower-case; then Latin letters without a decomposition are spelled out (`ß` → `ss`, `æ` → `ae`,
 *    `ø` → `o`, `ł` → `l` …).
 * 5. Letters and digits of any script stay (`日本のユーザー` keeps its name rather than vanishing);
 *    every run of anything else (spaces, punctuation, emoji) becomes one `_`, and `_` at either
 *    end is trimmed. The result is recomposed (NFC).
 * 6. A name with nothing left (`🔥🔥`) becomes `audience`.
 *
 * Applying it twice gives the same result, so a name that is already snake_case is kept.
 */
export function snakeCase(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
    .replace(/[\uFE00-\uFE0F\u{E0100}-\u{E01EF}\p{Me}]/gu, '')
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[ßæœøłđðþı]/g, (c) => SPELLED_OUT[c] ?? c)
    // A mark counts as part of a word only when it follows a letter, digit or another mark.
    .replace(/(?<![\p{L}\p{N}\p{M}])\p{M}+/gu, '')
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
    .normalize('NFC');
  return words === '' ? 'audience' : words;
}

/** Lower-case Latin letters that NFKD leaves whole. */
const SPELLED_OUT: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' };
