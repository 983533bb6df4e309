import should from 'should';

// The built package, as Node-RED loads it.
const { packLines } = require('../../../dist/messaging/outbound.js');

/** How an SMS Output's text and link lines are shared out over messages within the provider's Body limit. */
describe("messaging: lines packed into messages within the provider's Body limit", function () {
  it('fills each message with whole lines, in order', function () {
    should(packLines(['text', 'a'.repeat(5), 'b'.repeat(5), 'c'.repeat(8)], 12)).eql(['text\naaaaa', 'bbbbb', 'cccccccc']);
    should(packLines(['one line'], 1600)).eql(['one line']);
    should(packLines([], 1600)).eql([]);
  });

  it('cuts a line longer than a message at its last white space within the limit, else at the limit', function () {
    should(packLines(['the quick brown fox jumps', 'link'], 10)).eql(['the quick', 'brown fox', 'jumps\nlink']);
    should(packLines(['first line\nsecond'], 12)).eql(['first line', 'second']);
    should(packLines(['x'.repeat(25)], 10)).eql(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('never cuts a character of two code units (an emoji) in half', function () {
    const pieces: string[] = packLines(['abc' + '😀'.repeat(4)], 4);
    should(pieces.join('')).equal('abc' + '😀'.repeat(4));
    for (const piece of pieces) {
      should(piece.length).be.belowOrEqual(4);
      // A lone half of a pair does not survive a round trip through UTF-8.
      should(Buffer.from(piece, 'utf8').toString('utf8')).equal(piece);
    }
  });
});
