import FWCore.ParameterSet.Config as cms

process = cms.Process('HiForest')
process.source = cms.Source('PoolSource', fileNames = cms.untracked.vstring())
process.TFileService = cms.Service('TFileService', fileName = cms.string('HiForestMiniAOD.root'))
process.maxEvents = cms.untracked.PSet(input = cms.untracked.int32(-1))
