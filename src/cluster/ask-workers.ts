import cluster, { type Worker } from 'node:cluster'
import { isMessage, type AdminAnswer, type AdminQuery } from '../ipc/messages.js'

/** One worker's answer to an admin query: `answered` false when it exited or stayed silent past the timeout. */
export interface WorkerAnswer {
  worker: Worker
  answered: boolean
  value: unknown
}

interface Question {
  waiting: Map<number, Worker>
  answers: WorkerAnswer[]
  finish (): void
}

const questions = new Map<number, Question>()
let nextId = 0
let listening = false

function onWorkerMessage (worker: Worker, message: unknown): void {
  if (!isMessage<AdminAnswer>(message, 'lanegate:admin')) return
  const question = questions.get(message.id)
  if (question === undefined || !question.waiting.delete(worker.id)) return
  question.answers.push({ worker, answered: true, value: message.value })
  if (question.waiting.size === 0) question.finish()
}

/** A worker that died after the question was sent will never answer: stop waiting for it now. */
function onWorkerExit (worker: Worker): void {
  for (const question of questions.values()) {
    if (!question.waiting.delete(worker.id)) continue
    question.answers.push({ worker, answered: false, value: undefined })
    if (question.waiting.size === 0) question.finish()
  }
}

/**
 * Asks each of `workers` for its metrics or readiness over IPC and resolves with every worker's answer, in the
 * order of `workers`, once all have answered, exited, or `timeoutMs` passed — never rejects: a worker that could
 * not be asked, died meanwhile or stayed silent is reported as not answered, so the caller can serve what the
 * others said (a scrape during a worker restart still succeeds).
 */
export function askWorkers (workers: readonly Worker[], what: AdminQuery['what'], timeoutMs: number, details: Pick<AdminQuery, 'view' | 'query'> = {}): Promise<WorkerAnswer[]> {
  if (!listening) {
    cluster.on('message', onWorkerMessage)
    cluster.on('exit', onWorkerExit)
    listening = true
  }
  const id = ++nextId
  return new Promise((resolve) => {
    const question: Question = {
      waiting: new Map(),
      answers: [],
      finish () {
        if (!questions.delete(id)) return
        clearTimeout(timer)
        for (const worker of question.waiting.values()) question.answers.push({ worker, answered: false, value: undefined })
        question.waiting.clear()
        const order = new Map(workers.map((w, i) => [w.id, i]))
        resolve(question.answers.sort((a, b) => (order.get(a.worker.id) ?? 0) - (order.get(b.worker.id) ?? 0)))
      },
    }
    const timer = setTimeout(() => question.finish(), timeoutMs)
    questions.set(id, question)
    const query: AdminQuery = { channel: 'lanegate:admin', id, what, ...details }
    for (const worker of workers) {
      if (!worker.isConnected()) {
        question.answers.push({ worker, answered: false, value: undefined })
        continue
      }
      question.waiting.set(worker.id, worker)
      worker.send(query, function sent (error: Error | null) {
        // The channel closed under the send (the worker is exiting): it will not answer.
        if (error !== null && question.waiting.delete(worker.id)) {
          question.answers.push({ worker, answered: false, value: undefined })
          if (question.waiting.size === 0) question.finish()
        }
      })
    }
    if (question.waiting.size === 0) question.finish()
  })
}
