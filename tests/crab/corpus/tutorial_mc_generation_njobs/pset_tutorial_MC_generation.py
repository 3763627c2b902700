import FWCore.ParameterSet.Config as cms

process = cms.Process('GEN')
process.source = cms.Source("EmptySource")
process.maxEvents = cms.untracked.PSet(input = cms.untracked.int32(10))
process.RAWSIMoutput = cms.OutputModule("PoolOutputModule",
    fileName = cms.untracked.string('minbias.root'),
)
process.RAWSIMoutput_step = cms.EndPath(process.RAWSIMoutput)
