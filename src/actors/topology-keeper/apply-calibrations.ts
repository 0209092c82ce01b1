/**
 * Appliers for calibrated figures (docs/placement.md, "Calibrated figures"). Total and deterministic: figures of an
 * unknown node change nothing; a node keeps at most MAX_FRAMEWORKS_PER_NODE frameworks (a further one is ignored,
 * a known one is replaced); the `calibrations` key is absent while no node has any, so states without calibrations
 * keep the digest they had before calibrations existed.
 */
import { MAX_FRAMEWORKS_PER_NODE, type CalibrationRecorded } from '../../protocols/calibration.js';
import { own, withEntry, withoutEntry, type ClusterState, type NodeCalibrations } from './state.js';

function withCalibrations(state: ClusterState, all: Readonly<Record<string, NodeCalibrations>>): ClusterState {
  if (Object.keys(all).length > 0) return { ...state, calibrations: all };
  const { calibrations: _gone, ...rest } = state;
  return rest;
}

export function applyCalibrationRecorded(state: ClusterState, e: CalibrationRecorded): ClusterState {
  if (!own(state.nodes, e.nodeId)) return state;
  const all = state.calibrations ?? {};
  const mine = own(all, e.nodeId) ?? {};
  if (!own(mine, e.framework) && Object.keys(mine).length >= MAX_FRAMEWORKS_PER_NODE) return state;
  const figures = {
    gflops: e.gflops,
    memoryBandwidthGBps: e.memoryBandwidthGBps,
    layerOverheadMs: e.layerOverheadMs,
    ...(e.hopOverheadMs !== undefined ? { hopOverheadMs: e.hopOverheadMs } : {}),
    measuredAt: e.measuredAt,
  };
  return withCalibrations(state, withEntry(all, e.nodeId, withEntry(mine, e.framework, figures)));
}

/** A node that left keeps no figures (the state stays bounded by its members); it is calibrated again when asked. */
export function dropNodeCalibrations(state: ClusterState, nodeId: string): ClusterState {
  if (!state.calibrations || !own(state.calibrations, nodeId)) return state;
  return withCalibrations(state, withoutEntry(state.calibrations, nodeId));
}
