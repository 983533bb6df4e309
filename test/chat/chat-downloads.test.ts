import should from 'should';
import { ChatDownloads } from '../../src/chat/chat-downloads';

/** The Test chat keeps the files a Process sent for download: bounded in count and bytes, oldest first out. */
describe('Test chat downloads', function () {
  const file = (name: string, bytes: number) => ({ name, type: 'application/octet-stream', data: Buffer.alloc(bytes, 1) });

  it('keeps at most the file count it is given, dropping the oldest', function () {
    const kept = new ChatDownloads({ maxFiles: 3, maxBytes: 1000 });
    const ids = ['a', 'b', 'c', 'd'].map((n) => kept.keep(file(n, 10))!);
    should(kept.get(ids[0])).equal(undefined);
    should(ids.slice(1).map((id) => kept.get(id)?.name)).eql(['b', 'c', 'd']);
    should(kept.size).eql({ files: 3, bytes: 30 });
  });

  it('keeps at most the bytes it is given, and refuses a file bigger than all of them', function () {
    const kept = new ChatDownloads({ maxFiles: 100, maxBytes: 100 });
    const first = kept.keep(file('first', 60))!;
    const second = kept.keep(file('second', 60))!;
    should(kept.get(first)).equal(undefined);
    should(kept.get(second)?.name).equal('second');
    should(kept.keep(file('huge', 101))).equal(undefined);
    should(kept.size).eql({ files: 1, bytes: 60 });
  });

  it('names each file by an id nobody can guess', function () {
    const kept = new ChatDownloads();
    const id = kept.keep(file('x', 1))!;
    should(id).match(/^[A-Za-z0-9_-]{22}$/);
  });
});
