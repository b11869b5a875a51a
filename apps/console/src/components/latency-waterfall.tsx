import { BarChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';
import type { TurnLatency } from '../api';

// Only what this chart uses, so the bundle carries a fraction of ECharts.
echarts.use([BarChart, GridComponent, LegendComponent, TooltipComponent, SVGRenderer]);

/**
 * The waterfall steps, each from one milestone to the next, as the call record stamps them. A step
 * whose milestone is missing (no ASR for a realtime agent, a reply cut before its first mark) is
 * drawn as nothing, and the next step starts where the last known milestone was.
 */
const STEPS: Array<{ name: string; to: keyof TurnLatency; color: string }> = [
  { name: 'silence wait', to: 'endOfTurnFrameMs', color: '#c7cdd8' },
  { name: 'turn queueing', to: 'endOfTurnMs', color: '#8d96a8' },
  { name: 'ASR', to: 'asrFinalMs', color: '#2f5bea' },
  { name: 'LLM first token', to: 'llmFirstTokenMs', color: '#7a4fd6' },
  { name: 'TTS first byte', to: 'ttsFirstByteMs', color: '#d6508c' },
  { name: 'first frame out', to: 'firstFrameSentMs', color: '#e58a2b' },
  { name: 'first mark back', to: 'firstMarkEchoedMs', color: '#2b9e6b' },
];

/** Per step, its duration in each turn (ms, from the caller's end of speech on). */
export function waterfallSeries(turns: TurnLatency[]): Array<{ name: string; color: string; durations: number[] }> {
  const series = STEPS.map((step) => ({ name: step.name, color: step.color, durations: [] as number[] }));
  for (const turn of turns) {
    let last = turn.endOfSpeechMs;
    STEPS.forEach((step, index) => {
      const at = turn[step.to];
      const duration = last !== null && at !== null ? Math.max(0, at - last) : 0;
      series[index]?.durations.push(Math.round(duration * 10) / 10);
      if (at !== null) last = at;
    });
  }
  return series;
}

export function LatencyWaterfall({ turns }: { turns: TurnLatency[] }) {
  const element = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!element.current) return;
    const chart = echarts.init(element.current, undefined, { renderer: 'svg' });
    const series = waterfallSeries(turns);
    chart.setOption({
      animation: false,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (value: number) => `${value} ms` },
      legend: { top: 0 },
      grid: { left: 90, right: 24, top: 48, bottom: 32 },
      xAxis: { type: 'value', name: 'ms after the caller stopped speaking', nameLocation: 'middle', nameGap: 24 },
      yAxis: { type: 'category', inverse: true, data: turns.map((turn) => `reply ${turn.turnIndex}${turn.interruptedAtMs !== null ? ' (cut)' : ''}`) },
      series: series.map((step) => ({ name: step.name, type: 'bar', stack: 'waterfall', data: step.durations, itemStyle: { color: step.color }, barMaxWidth: 28 })),
    });
    const resize = () => chart.resize();
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.dispose();
    };
  }, [turns]);

  return <div ref={element} className="chart" style={{ height: `${Math.max(160, 70 + turns.length * 42)}px` }} data-testid="latency-waterfall" />;
}
