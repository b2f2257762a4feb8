/** A Grafana template variable as a query or data source reference spells it: `${name}`. */
export const grafanaVariable = (name: string): string => `\${${name}}`;
