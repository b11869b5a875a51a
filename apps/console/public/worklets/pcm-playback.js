// Runs in the AudioWorklet thread: plays the agent's PCM16 frames in order and says when the audio
// before each mark has really played (the page echoes the mark to the server, as Twilio does). On
// `clear` (barge-in) everything queued is dropped and every pending mark is reported as cleared.
// It also reports the level of what it plays, so the page can show (and a test can check) that the
// agent is heard.

class PcmPlayback extends AudioWorkletProcessor {
  constructor() {
    super();
    this.queue = []; // { samples: Float32Array, offset } | { mark: string }
    this.levelSum = 0;
    this.levelCount = 0;
    this.port.onmessage = (event) => {
      const message = event.data;
      if (message.type === 'audio') {
        const pcm = new Int16Array(message.buffer);
        const samples = new Float32Array(pcm.length);
        for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 0x8000;
        this.queue.push({ samples, offset: 0 });
      } else if (message.type === 'mark') {
        this.queue.push({ mark: message.name });
        this.releaseMarks();
      } else if (message.type === 'clear') {
        const cleared = this.queue.filter((item) => item.mark !== undefined).map((item) => item.mark);
        this.queue = [];
        this.port.postMessage({ type: 'cleared', names: cleared });
      }
    };
  }

  /** Marks at the head of the queue: all audio before them has played. */
  releaseMarks() {
    while (this.queue.length > 0 && this.queue[0].mark !== undefined) {
      this.port.postMessage({ type: 'played', name: this.queue.shift().mark });
    }
  }

  process(_inputs, outputs) {
    const out = outputs[0][0];
    let written = 0;
    while (written < out.length && this.queue.length > 0) {
      const head = this.queue[0];
      if (head.mark !== undefined) {
        this.releaseMarks();
        continue;
      }
      const take = Math.min(out.length - written, head.samples.length - head.offset);
      out.set(head.samples.subarray(head.offset, head.offset + take), written);
      for (let i = written; i < written + take; i++) this.levelSum += out[i] * out[i];
      written += take;
      head.offset += take;
      if (head.offset === head.samples.length) this.queue.shift();
    }
    this.releaseMarks();
    for (let i = 1; i < outputs[0].length; i++) outputs[0][i].set(out);
    this.levelCount += out.length;
    if (this.levelCount >= 1600) {
      this.port.postMessage({ type: 'level', rms: Math.sqrt(this.levelSum / this.levelCount) });
      this.levelSum = 0;
      this.levelCount = 0;
    }
    return true;
  }
}

registerProcessor('pcm-playback', PcmPlayback);
