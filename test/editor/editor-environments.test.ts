import should from 'should';
import { Editor, NO_BROWSER, findChromium } from '../harness/browser';

// Code in page.evaluate runs in the browser; the tests compile without the DOM library.
declare const window: any;

const KINDS = ['teamchat-environment', 'telco-voice-environment', 'telco-messaging-environment'];
const LONG_BASE = 'https://bots.example-company-with-a-rather-long-name.com/some/long/path/prefix';

interface DialogShape {
  headings: string[];
  labels: Record<string, string>;
  placeholders: Record<string, string>;
  urlRows: Array<{ label: string; url: string; copy: string; icon: string }>;
  otherCopyButtons: number;
  overflow: { form: number; rows: string[] };
  required: string[];
  token: string;
  tips: string[];
}

/**
 * The three Environment dialogs read alike: the same sections in the same order, the same words
 * for the same fields, one kind of URL row with a "Copy" button, the credentials a module needs
 * marked, and long URLs wrapped inside the dialog at a laptop's width.
 */
(findChromium() ? describe : describe.skip)(`the Environment dialogs${findChromium() ? '' : ` (${NO_BROWSER})`}`, function () {
  this.timeout(120000);
  let editor: Editor;
  const shapes: Record<string, DialogShape> = {};

  before(async function () {
    editor = await Editor.open({ width: 1366, height: 768 });
    for (const type of KINDS) {
      shapes[type] = await editor.page.evaluate(
        async ({ type, base }) => {
          const R = window.RED;
          const $ = window.$;
          const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
          const def = R.nodes.getType(type);
          const config: any = { id: R.nodes.id(), type, _def: def, z: '', users: [] };
          for (const d in def.defaults) if (def.defaults[d].value !== undefined) config[d] = JSON.parse(JSON.stringify(def.defaults[d].value));
          config.publicBaseUrl = base;
          const added = R.nodes.add(config);
          R.editor.editConfig('', type, added.id);
          for (let i = 0; i < 400 && !$('#node-config-dialog-ok').length; i++) await wait(50);
          await wait(800);
          const form = $('#node-config-dialog-edit-form');
          const text = (el: any) => $(el).text().replace(/\s+/g, ' ').trim();
          const labelOf = (id: string) => text(form.find(`label[for="node-config-input-${id}"]`));
          const placeholderOf = (id: string) => form.find(`#node-config-input-${id}`).attr('placeholder') ?? '';
          const common = ['name', 'publicBaseUrl', 'token', 'apiUrl', 'sessionStore', 'maxSessions', 'validateSignatures', 'webhookSigningSecret'];
          const formBox = form[0].getBoundingClientRect();
          const shape = {
            headings: form
              .find('h4')
              .map((_i: number, h: any) => text(h))
              .get(),
            labels: Object.fromEntries(common.map((id) => [id, labelOf(id)]).filter(([, l]) => l)),
            placeholders: Object.fromEntries(['apiUrl', 'sessionStore', 'maxSessions'].map((id) => [id, placeholderOf(id)])),
            urlRows: form
              .find('.cs-url-row:visible')
              .map((_i: number, row: any) => ({
                label: text($(row).children('label')),
                url: text($(row).find('code')),
                copy: text($(row).find('button')),
                icon: $(row).find('button i').attr('class'),
              }))
              .get(),
            otherCopyButtons: form.find('button').filter((_i: number, b: any) => /copy|clipboard/i.test($(b).html()) && !$(b).hasClass('cs-copy')).length,
            overflow: {
              form: form[0].scrollWidth - form[0].clientWidth,
              rows: form
                .find('.cs-url-row:visible code')
                .filter((_i: number, c: any) => c.getBoundingClientRect().right > formBox.right + 1)
                .map((_i: number, c: any) => c.id)
                .get(),
            },
            required: form
              .find('input.input-error')
              .map((_i: number, i: any) => i.id.replace('node-config-input-', ''))
              .get()
              .sort(),
            token: form.find('#node-config-input-token').val(),
            tips: form
              .find('.form-tips:visible')
              .map((_i: number, t: any) => text(t))
              .get(),
          };
          $('#node-config-dialog-cancel').trigger('click');
          for (let i = 0; i < 400 && $('#node-config-dialog-ok').length; i++) await wait(50);
          await wait(300);
          R.nodes.remove(added.id);
          return shape;
        },
        { type, base: LONG_BASE },
      );
    }
  });
  after(async function () {
    await editor?.close();
  });

  it("have the same sections in the same order: Credentials, the module's own settings, Inbound URLs, Advanced", function () {
    for (const type of KINDS) {
      const h = shapes[type].headings;
      should(h.length).equal(4, `${type}: ${h.join(', ')}`);
      should([h[0], h[2], h[3]]).eql(['Credentials', 'Inbound URLs', 'Advanced'], type);
    }
    should(KINDS.map((t) => shapes[t].headings[1])).eql(['Sessions', 'Phone settings', 'Messaging Service']);
  });

  it('use one wording for the fields they share, with the same hints', function () {
    const [slack, voice, messaging] = KINDS.map((t) => shapes[t]);
    for (const field of ['name', 'publicBaseUrl', 'token', 'apiUrl', 'sessionStore', 'maxSessions']) {
      should(voice.labels[field]).equal(slack.labels[field], field);
      should(messaging.labels[field]).equal(slack.labels[field], field);
    }
    should(slack.labels.apiUrl).equal('API URL');
    for (const field of ['validateSignatures', 'webhookSigningSecret']) should(messaging.labels[field]).equal(voice.labels[field], field);
    for (const shape of [slack, voice, messaging]) {
      should(shape.placeholders.maxSessions).equal('0 = no limit');
      should(shape.placeholders.sessionStore).equal(slack.placeholders.sessionStore);
      should(shape.placeholders.apiUrl).match(/^empty = /);
    }
    const signatureTip = (s: DialogShape) => s.tips.find((t) => /inbound webhook/.test(t));
    should(signatureTip(messaging)).equal(signatureTip(voice)).and.be.ok();
  });

  it('show each inbound URL whole, wrapped inside the dialog, with a "Copy" button of one kind', function () {
    for (const type of KINDS) {
      const shape = shapes[type];
      should(shape.urlRows.length).be.aboveOrEqual(2, type);
      for (const row of shape.urlRows) {
        should(row.url.startsWith(LONG_BASE + '/')).be.true(`${type} ${row.label}: ${row.url}`);
        should([row.copy, row.icon]).eql(['Copy', 'fa fa-copy'], `${type} ${row.label}`);
      }
      should(shape.urlRows.filter((r) => r.url.includes(shape.token)).length).be.aboveOrEqual(1, type);
      should(shape.otherCopyButtons).equal(0, type);
      should(shape.overflow).eql({ form: 0, rows: [] }, `${type} runs off the dialog`);
    }
  });

  it('mark the credentials each module needs when they are empty', function () {
    should(shapes['teamchat-environment'].required).eql(['botToken', 'signingSecret']);
    should(shapes['telco-voice-environment'].required).eql(['accountSid', 'authToken']);
    should(shapes['telco-messaging-environment'].required).eql(['accountSid', 'authToken']);
    should(editor.takeErrors()).eql([]);
  });
});
