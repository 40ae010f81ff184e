import type { ReactElement } from 'react';
import { SCENARIOS, type Scenario } from '../model/scenarios.ts';

/** The scripted scenarios; picking one starts a fresh conversation with its prompt. */
export function ScenarioList({
  active,
  onPick,
  heading,
}: {
  active: string | undefined;
  onPick: (scenario: Scenario) => void;
  heading: string;
}): ReactElement {
  return (
    <nav className="scenarios" aria-labelledby="scenarios-title">
      <h2 id="scenarios-title" className="panel-title">
        {heading}
      </h2>
      <ol className="scenario-list">
        {SCENARIOS.map((scenario) => (
          <li key={scenario.id}>
            <button
              type="button"
              className="scenario"
              data-scenario={scenario.id}
              aria-current={scenario.id === active ? 'true' : undefined}
              aria-describedby={`scenario-${scenario.id}`}
              onClick={() => onPick(scenario)}
            >
              {scenario.title}
            </button>
            <p id={`scenario-${scenario.id}`} className="scenario-shows">
              {scenario.shows}
            </p>
          </li>
        ))}
      </ol>
    </nav>
  );
}
