/** The one line for a Node.js `version` that `range` (engines' `>=X.Y.Z`) refuses; undefined when it is new enough. */
export function nodeVersionProblem(version: string, range: string): string | undefined;
