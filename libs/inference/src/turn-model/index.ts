export { SmartTurnClassifier, type SmartTurnClassifierOptions } from './smart-turn-classifier';
