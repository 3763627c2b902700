import FWCore.ParameterSet.Config as cms

process = cms.Process('ANALYSIS')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
process.maxEvents = cms.untracked.PSet(input=cms.untracked.int32(-1))
