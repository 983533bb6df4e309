import { registerAdminRoutes } from '../../chat/routes/admin-routes';
import { chatBehaviour } from '../../chat/behaviour';
import { ChatDownloads, registerChatDownloads } from '../../chat/chat-downloads';
import { registerTestClicks } from '../../chat/test-clicks';
import { defineNode } from '../../kit/define-node';
import { registerOperatingRoutes } from '../../kit/operating-routes';
import { engineFor } from '../../engine/engine';
import type { RED, RedNode } from '../../model/red';
import { endTask } from '../../tasks/end-task';
import { inputTask } from '../../tasks/input-task';
import { outputTask } from '../../tasks/output-task';
import { sessionStart } from '../../tasks/session-start';

/** The engine, the standard Tasks and the shared Start, with the test chat's Chat Channel. */
export = function registerCore(RED: RED): void {
  const engine = engineFor(RED);
  const downloads = new ChatDownloads();
  engine.registerChannel('chat', chatBehaviour(downloads));
  registerAdminRoutes(RED, engine);
  registerChatDownloads(RED, downloads);
  registerTestClicks(RED, engine);
  registerOperatingRoutes(RED, engine);

  const define = (type: string, setUp: (red: RED, node: RedNode, config: any) => void, options?: object) =>
    defineNode(RED, type, (node, config) => setUp(RED, node, config), options);
  define('session-start', sessionStart);
  define('output-task', outputTask);
  define('input-task', inputTask);
  define('end-task', (red, node) => endTask(red, node));
};
