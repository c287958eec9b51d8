// The byte-level vocabulary of the dummy models and its tokenizer: ids 0-255 are the bytes (written
// in GPT-2's printable byte alphabet, which llama.cpp's BPE vocabulary loader expects), then
// <|bos|>, <|eos|>, and filler tokens up to the shape's vocabulary size. Text is tokenized to its
// UTF-8 bytes; a generated filler id reads as its token text.
export const BOS_TOKEN = 256;
export const EOS_TOKEN = 257;

/** GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others map above U+0100. */
function byteAlphabet(): string[] {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let next = 0;
  for (let b = 0; b < 256; b++) out.push(printable(b) ? String.fromCharCode(b) : String.fromCharCode(256 + next++));
  return out;
}

/** The token texts of a vocabulary of `size` ids. */
export function byteTokenTexts(size: number): string[] {
  const texts = byteAlphabet();
  texts.push('<|bos|>', '<|eos|>');
  for (let id = texts.length; id < size; id++) texts.push(`<|t${id}|>`);
  return texts;
}

/** Text as token ids: its UTF-8 bytes. */
export function encodeText(text: string): number[] {
  return [...Buffer.from(text, 'utf8')];
}

/** Generated ids as text: bytes decoded as UTF-8 (a split character waits for its next bytes), other ids as their token text. */
export class TextDecoder8 {
  private pending: number[] = [];
  push(id: number): string {
    if (id < 256) {
      this.pending.push(id);
      const text = Buffer.from(this.pending).toString('utf8');
      if (text.endsWith('\uFFFD') && this.pending.length < 4) return '';
      this.pending = [];
      return text;
    }
    const flushed = this.flush();
    return flushed + (id === BOS_TOKEN ? '<|bos|>' : id === EOS_TOKEN ? '<|eos|>' : `<|t${id}|>`);
  }
  flush(): string {
    const text = this.pending.length > 0 ? Buffer.from(this.pending).toString('utf8') : '';
    this.pending = [];
    return text;
  }
}
