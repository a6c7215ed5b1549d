/**
 * A Logger for a worker thread whose lines the main thread writes (its logger, its format, its
 * output): each line is posted as a `log` message, at the levels the main thread's loggers had
 * when the thread started. The executor and gRPC threads use it.
 */
import { LOG_RANK as RANK, type LogFields, type Logger, type LogLevel } from '../src/log.js';

export interface ThreadLogLine {
  type: 'log';
  level: Exclude<LogLevel, 'none'>;
  module: string;
  msg: string;
  fields?: LogFields;
}

export function threadLogger(send: (line: ThreadLogLine) => void, levels: Readonly<Record<string, LogLevel>>, module: string, context: LogFields = {}): Logger {
  const level = levels[module] ?? 'info';
  const at = (l: Exclude<LogLevel, 'none'>) => (msg: string, fields?: LogFields) => {
    if (RANK[l] >= RANK[level]) send({ type: 'log', level: l, module, msg, fields: { ...fields, ...context } });
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    enabled: (l) => RANK[l] >= RANK[level],
    child: (f) => {
      const { module: m, ...rest } = f;
      return threadLogger(send, levels, typeof m === 'string' ? m : module, { ...context, ...rest });
    },
    level,
  };
}
