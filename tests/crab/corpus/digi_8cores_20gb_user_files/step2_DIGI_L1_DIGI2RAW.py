import FWCore.ParameterSet.Config as cms

process = cms.Process('HLT')
process.options = cms.untracked.PSet(numberOfThreads = cms.untracked.uint32(8))
process.source = cms.Source('PoolSource', fileNames = cms.untracked.vstring())
process.RAWSIMoutput = cms.OutputModule('PoolOutputModule',
    fileName = cms.untracked.string('step2_DIGI.root'))
process.RAWSIMoutput_step = cms.EndPath(process.RAWSIMoutput)
