import FWCore.ParameterSet.Config as cms

process = cms.Process('RATES')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
