import { BarChart as EChartsBar } from 'echarts/charts';
import { GridComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

echarts.use([EChartsBar, GridComponent, TooltipComponent, SVGRenderer]);

/** One series of bars: a value per category (spend per day, per agent). */
export function BarChart({ categories, values, unit, testId }: { categories: string[]; values: number[]; unit: string; testId: string }) {
  const element = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!element.current) return;
    const chart = echarts.init(element.current, undefined, { renderer: 'svg' });
    chart.setOption({
      animation: false,
      tooltip: { trigger: 'axis', valueFormatter: (value: number) => `${value} ${unit}` },
      grid: { left: 64, right: 16, top: 16, bottom: 48 },
      xAxis: { type: 'category', data: categories, axisLabel: { interval: 'auto', hideOverlap: true } },
      yAxis: { type: 'value', name: unit },
      series: [{ type: 'bar', data: values, itemStyle: { color: '#2f5bea' }, barMaxWidth: 36 }],
    });
    const resize = () => chart.resize();
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.dispose();
    };
  }, [categories, values, unit]);

  return <div ref={element} className="chart" style={{ height: '260px' }} data-testid={testId} />;
}
