/** A one-select filter form over a fixed list of choices; the empty choice reads "all". */
export function ChoiceFilter<T extends string>(props: {
  formLabel: string;
  id: string;
  label: string;
  value: T | '';
  choices: readonly (T | '')[];
  onChange: (value: T | '') => void;
}) {
  return (
    <form className="filters" aria-label={props.formLabel} onSubmit={(e) => e.preventDefault()}>
      <div className="field">
        <label htmlFor={props.id}>{props.label}</label>
        <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.target.value as T | '')}>
          {props.choices.map((c) => (
            <option key={c} value={c}>
              {c || 'all'}
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}
